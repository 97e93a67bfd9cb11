"""An answer measured several times: its median and spread, and rankings that hold.

A search's answer (PDR or NDR, pps) moves between runs on a shared machine more than the
precision the search stops at, so a search is repeated R times, each on a fresh testbed
with the engine started again (:func:`routerlab.measuring.search.run_search`), and its
answer is the *median* of the repeats, with their *range* (lowest and highest) and the
Student-t 95% interval of their mean (:func:`routerlab.analysis.stats.mean_interval`).

Two answers are *separated* when every repeat of one is above every repeat of the other
(their ranges do not overlap). That is the exact rank-sum (Mann-Whitney) test with U = 0:
if the repeats of two engines of the same capacity were exchangeable, they would separate
by chance with probability 2 / C(2R, R): 10% with 3 repeats each (5% in a given
direction), 0.8% with 5. Repeats measured one engine after another are not quite that: a
machine that drifts during the run can separate them too, which is why ``bench engines``
takes its engines' repeats in turn. An engine is ranked above another only when they
separate; otherwise they tie, and tables say so. An answer with one repeat has no spread:
it ranks nothing.

A lower bound stays a lower bound: a repeat whose answer is "at least X" (the generator
bounded it, or it passed at the ceiling) reaches up without limit, so nothing is ranked
above it on its account, and the median of repeats of which any is a lower bound is "at
least" the median.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from routerlab.analysis import stats

#: The benchmark's goal for an answer's spread: its highest repeat over its lowest.
SPREAD_GOAL = 1.1


def repeat_of(df: pd.DataFrame) -> pd.Series:
    """Each row's repeat (0-based) in a search file (``search_results.csv``,
    ``search_trials.csv``, ``superseded_search_trials.csv``): files written before searches
    were repeated hold one search each, repeat 0."""
    return df["repeat"].fillna(0).astype(int) if "repeat" in df else pd.Series(0, index=df.index, dtype=int)


@dataclass(frozen=True)
class Repeated:
    """One answer (pps) measured ``n`` times.

    Attributes
    ----------
    values : tuple of float
        Each repeat's answer in pps, in the order measured; NaN for a repeat whose answer
        was below the search range.
    at_least : tuple of bool
        Whether each repeat's answer is only a lower bound.
    uppers : tuple of float
        Each repeat's lowest failing load, pps (NaN: none failed).
    generator : tuple of bool
        Whether the generator bounded each repeat's answer
        (:func:`routerlab.analysis.stats.generator_bound`).
    """

    values: tuple
    at_least: tuple = ()
    uppers: tuple = ()
    generator: tuple = ()

    def __post_init__(self):
        vals = tuple(float("nan") if v is None else float(v) for v in self.values)
        object.__setattr__(self, "values", vals)
        object.__setattr__(self, "at_least", tuple(bool(x) for x in self.at_least) or (False,) * len(vals))
        object.__setattr__(self, "uppers", tuple(float("nan") if u is None else float(u) for u in self.uppers)
                           or (float("nan"),) * len(vals))
        object.__setattr__(self, "generator", tuple(bool(x) for x in self.generator) or (False,) * len(vals))

    @property
    def n(self) -> int:
        """Repeats."""
        return len(self.values)

    @property
    def _known(self) -> np.ndarray:
        # a repeat below the search range carried less than any load tried: 0 pps for order
        return np.nan_to_num(np.asarray(self.values, dtype=float), nan=0.0)

    @property
    def below(self) -> int:
        """Repeats whose answer was below the search range."""
        return int(np.isnan(np.asarray(self.values, dtype=float)).sum())

    @property
    def median(self) -> float:
        """The answer: the median of the repeats (pps); NaN when it falls on repeats below
        the search range."""
        if not self.n:
            return float("nan")
        m = float(np.median(self._known))
        return float("nan") if m == 0 and self.below else m

    @property
    def low(self) -> float:
        """The lowest repeat (pps)."""
        return float(self._known.min()) if self.n else float("nan")

    @property
    def high(self) -> float:
        """The highest repeat (pps); infinite when any repeat is a lower bound (for order)."""
        if not self.n:
            return float("nan")
        return math.inf if self.lower_bound else float(self._known.max())

    @property
    def highest_seen(self) -> float:
        """The highest repeat's answer as measured (pps), lower bound or not."""
        return float(self._known.max()) if self.n else float("nan")

    @property
    def lower_bound(self) -> bool:
        """Whether the answer is only known to be at least its median."""
        return any(self.at_least)

    @property
    def lowest_bound_reason(self) -> str:
        """Why the lowest repeat's answer is only a lower bound
        (:func:`routerlab.analysis.stats.bound_reason`: limited by the generator, or passed
        at the ceiling); "" when it is the router's own, as it is when any repeat that shares
        the lowest answer is the router's own, and where there is no spread (one repeat, or
        one below the search range). The router of such a repeat may have carried more, so
        the spread then does not measure how far the router's answers moved, in either
        direction."""
        if self.n < 2 or self.below:
            return ""
        lowest = [i for i, v in enumerate(self._known) if v == self.low]
        if not all(self.at_least[i] for i in lowest):
            return ""
        # a bound with a failing load above it can only be the generator's
        return " or ".join(dict.fromkeys(stats.bound_reason(self.generator[i] or not math.isnan(self.uppers[i]),
                                                            self.uppers[i]) for i in lowest))

    @property
    def interval(self) -> tuple[float, float]:
        """The Student-t 95% interval of the repeats' mean (pps); NaN with fewer than two,
        with a repeat below the search range, or with one that is a lower bound (whose
        true value no upper limit holds)."""
        if self.below or self.lower_bound:
            return (float("nan"), float("nan"))
        mean, half = stats.mean_interval(self._known)
        return (mean - half, mean + half)

    @property
    def spread(self) -> float:
        """The highest repeat over the lowest (a ratio >= 1; NaN with one repeat or one
        below the search range; with a lower bound among them, itself only a bound)."""
        lo, hi = self.low, self.highest_seen
        return hi / lo if self.n > 1 and lo > 0 and not self.below else float("nan")

    def words(self) -> str:
        """The answer as tables show it: the median, then the range and the repeats."""
        if not self.n:
            return "not measured"
        if all(math.isnan(v) for v in self.values):
            return "below the search range" + (f" (all {self.n} repeats)" if self.n > 1 else "")
        if math.isnan(self.median):
            return (f"below the search range (median; {self.below} of {self.n} repeats below it, the highest "
                    f"{self.highest_seen:,.0f} pps)")
        head = f"{'at least ' if self.lower_bound else ''}{self.median:,.0f} pps"
        if self.n == 1:
            return head + " (one repeat)"
        low = "below the search range" if self.below else f"{self.low:,.0f}"
        return f"{head} (median; {low} to {self.highest_seen:,.0f} over {self.n} repeats)"


def separated(a: Repeated, b: Repeated) -> int:
    """+1 when every repeat of ``a`` is above every repeat of ``b``, -1 the other way, 0 when
    their ranges overlap or either has fewer than two repeats (a tie)."""
    if a.n < 2 or b.n < 2:
        return 0
    if a.low > b.high:
        return 1
    if b.low > a.high:
        return -1
    return 0


def rank(answers: dict) -> pd.DataFrame:
    """Rank answers that hold: ``answers`` maps a label (an engine) to its
    :class:`Repeated`. One row per label, highest median first: ``label``, ``rank`` (1 +
    the labels separated above it, so tied labels share a rank), ``median_pps``,
    ``low_pps``, ``high_pps`` (the highest repeat as measured), ``repeats``, ``spread``,
    ``lower_bound``, ``ties`` (the labels it is not separated from, comma-separated) and
    ``answer`` (:meth:`Repeated.words`)."""
    labels = sorted(answers, key=lambda k: -answers[k].median if answers[k].n else math.inf)
    rows = []
    for k in labels:
        a = answers[k]
        above = sum(separated(answers[o], a) == 1 for o in labels if o != k)
        ties = [o for o in labels if o != k and separated(a, answers[o]) == 0]
        rows.append({"label": k, "rank": 1 + above, "median_pps": a.median, "low_pps": a.low,
                     "high_pps": a.highest_seen, "repeats": a.n, "spread": a.spread, "lower_bound": a.lower_bound,
                     "ties": ", ".join(ties), "answer": a.words()})
    return pd.DataFrame(rows, columns=["label", "rank", "median_pps", "low_pps", "high_pps", "repeats", "spread",
                                       "lower_bound", "ties", "answer"])


def order(answers: dict) -> str:
    """The ranking in one line, highest median first: ``a > b`` where every repeat of
    ``a`` is above every one of ``b``, ``a ≈ b`` (a tie) where they overlap; then, in
    brackets, the pairs that separate across a tie (``c ≈ b ≈ a (c > a)``)."""
    labels = sorted(answers, key=lambda k: -(answers[k]._known.mean() if answers[k].n else -1))
    labels = sorted(labels, key=lambda k: -np.nan_to_num(answers[k].median, nan=0.0))
    if not labels:
        return ""
    out = labels[0]
    for prev, k in zip(labels, labels[1:]):
        out += (" > " if separated(answers[prev], answers[k]) == 1 else " ≈ ") + k
    across = [f"{a} > {b}" for i, a in enumerate(labels) for b in labels[i + 2:]
              if separated(answers[a], answers[b]) == 1
              and any(separated(answers[x], answers[y]) != 1
                      for x, y in zip(labels[i:labels.index(b)], labels[i + 1:labels.index(b) + 1]))]
    return out + (f" ({', '.join(across)})" if across else "")


def from_searches(results: pd.DataFrame) -> pd.DataFrame:
    """Every search's repeats made one answer: ``results`` as
    :func:`routerlab.analysis.datasets.read_searches` returns them (one row per repeat,
    with ``repeat``, ``generator_bound``). One row per experiment, kind and method, in the
    order first measured: ``experiment``, ``engine``, ``scenario``, ``kind``, ``method``,
    ``answer`` (:class:`Repeated`), ``repeats``, ``median_pps``, ``low_pps``, ``high_pps``,
    ``lcl95_pps``, ``ucl95_pps``, ``spread``, ``at_least``, ``words``."""
    cols = ["experiment", "engine", "scenario", "kind", "method", "answer", "repeats", "median_pps", "low_pps",
            "high_pps", "lcl95_pps", "ucl95_pps", "spread", "at_least", "words"]
    if results is None or not len(results):
        return pd.DataFrame(columns=cols)
    r = results.assign(method=results["method"].fillna("routerlab") if "method" in results else "routerlab",
                       repeat=results["repeat"].fillna(0) if "repeat" in results else 0)
    rows = []
    for key, g in r.groupby(["experiment", "kind", "method"], sort=False):
        g = g.sort_values("repeat", kind="stable")
        upper = pd.to_numeric(g["upper_pps"], errors="coerce")
        bound = stats.flag(g["generator_bound"]).to_numpy() if "generator_bound" in g else np.zeros(len(g), bool)
        a = Repeated(tuple(pd.to_numeric(g["lower_pps"], errors="coerce")),
                     tuple(bound | upper.isna().to_numpy() & pd.to_numeric(g["lower_pps"], errors="coerce").notna()
                           .to_numpy()),
                     tuple(upper), tuple(bound))
        lo, hi = a.interval
        first = g.iloc[0]
        rows.append({"experiment": key[0], "engine": first.get("engine", ""), "scenario": first.get("scenario", ""),
                     "kind": key[1],
                     "method": key[2], "answer": a, "repeats": a.n, "median_pps": a.median, "low_pps": a.low,
                     "high_pps": a.highest_seen, "lcl95_pps": lo, "ucl95_pps": hi, "spread": a.spread,
                     "at_least": a.lower_bound, "words": a.words()})
    return pd.DataFrame(rows, columns=cols)


def sweep_against_search(sweep_bound: stats.RateBound, next_load: float | None, a: Repeated) -> tuple[bool, str]:
    """Whether a sweep's PDR and a repeated search's answer agree, and why not.

    The sweep says the PDR lies in [``sweep_bound.load``, ``next_load``) (the next load,
    which failed; without one, no load failed and it reaches up without limit); each
    repeat of the search says it lies in [its answer, its lowest failing load). They agree
    when the sweep's range and the search's (lowest answer to highest failing load)
    overlap. Returns (agree, words): the words name both ranges, and on which side the
    search fell when they do not."""
    if sweep_bound.status == "below_range" or a.n == 0:
        lo_s, hi_s = 0.0, (next_load or sweep_bound.load or 0.0)
    else:
        lo_s = sweep_bound.load
        hi_s = math.inf if sweep_bound.status == "at_least_max" or next_load is None else next_load
    uppers = np.asarray(a.uppers, dtype=float)
    hi_q = math.inf if a.lower_bound or np.isnan(uppers).any() else float(uppers.max())
    lo_q = a.low  # a repeat below the search range counts as 0 pps: below any sweep load
    agree = lo_q < hi_s and lo_s < hi_q
    sweep_words = ("below the sweep's lowest load" if sweep_bound.status == "below_range"
                   else f"from {lo_s:,.0f} pps" + (" up (no load failed)" if hi_s == math.inf
                                                   else f" to below {hi_s:,.0f} pps"))
    search_words = f"{lo_q:,.0f} pps" + (" up" if hi_q == math.inf else f" to below {hi_q:,.0f} pps")
    words = f"the sweep's PDR {sweep_words}; the search's {a.n} repeat{'s' if a.n != 1 else ''} {search_words}"
    if not agree:
        words += (": the search fails below the sweep's PDR" if hi_q <= lo_s
                  else ": the search passes above the sweep's failing load")
    return agree, words


#: What a trial records that may move an answer between repeats (the columns of
#: ``search_trials.csv``), each with what it says in words.
CAUSES = {
    "napi_ns_per_packet": "the router's NAPI time per packet (ns)",
    "engine_ns_per_packet": "the engine's own threads' time per packet (ns)",
    "engine_wait_ms": "the engine's threads' wait for their CPU (ms)",
    "router_ns_per_packet": "the router CPU's work per packet (ns, at the tick)",
    "cpu_speed": "the router CPU's speed (loop iterations per µs)",
    "memory_ns": "the time of a load from the shared cache (ns)",
    "cpu_distance_ns": "the round trip of a cache line between the router's and the generator's CPUs (ns)",
    "steal": "steal (all CPUs)",
    "router_steal": "steal on the router's CPU",
    "cpu_stopped_ms": "the router CPU's stops (ms)",
    "gen_lagged_ms": "the generator's lags (ms)",
    "gen_cpu_load": "the generator's (and sink's) CPU busy share",
    "cpu_load": "the router CPU's busy share (at the tick)",
}
#: Causes that are the machine's, not the router's: when one of them moves with an
#: answer, the spread is the host's doing.
MACHINE_CAUSES = ("cpu_speed", "memory_ns", "cpu_distance_ns", "steal", "router_steal", "cpu_stopped_ms",
                  "gen_lagged_ms")
#: Quantities that restate the answer rather than cause it: a time per packet at a load
#: where the router's CPU is (nearly) full is its busy share over the answer, a CPU's
#: busy share follows the load a repeat's full-length trials ran at, and so does an
#: engine's wait for its CPU, which the kernel's receive work for its packets shares. They show *how* an
#: answer moved (the router took longer per packet), never why.
CONSEQUENCES = ("napi_ns_per_packet", "engine_ns_per_packet", "router_ns_per_packet", "engine_wait_ms", "gen_cpu_load",
                "cpu_load")
#: A recorded quantity *moves with* an answer when the rank correlation of its per-repeat
#: values with the repeats' answers is at least this (in absolute value) over at least
#: :data:`MIN_REPEATS_TO_EXPLAIN` repeats (with 5 repeats, |ρ| = 0.9 happens by chance
#: about one time in twelve, 1.0 one in sixty), and it moved enough to account for at
#: least :data:`MIN_SHARE_EXPLAINED` of the answer's move (its :func:`effect`).
MOVES_WITH = 0.9
MIN_REPEATS_TO_EXPLAIN = 4
MIN_SHARE_EXPLAINED = 0.5
#: The recorded quantities that are shares of a CPU's time (ratios in [0, 1]) and those
#: that are milliseconds of a trial: their effect is how much of the trial's time moved.
_SHARES = ("steal", "router_steal", "gen_cpu_load", "cpu_load")
_MILLISECONDS = ("cpu_stopped_ms", "gen_lagged_ms", "engine_wait_ms")
#: Disturbances come now and then: a repeat's value of them is their mean over its trials
#: (the median of a few disturbed trials among many is nothing), the others' their median.
_DISTURBANCES = ("steal", "router_steal", "cpu_stopped_ms", "gen_lagged_ms")
#: The count of a repeat's attempts trial validation set aside as disturbed
#: (``superseded_search_trials.csv``): the machine's too; a count, judged by ρ alone.
SET_ASIDE = "set_aside"


#: How :func:`cause_words` begins the words of a spread that the trials' own variation
#: accounts for (:func:`disagreement`).
WITHIN_REPEAT = "the trials' variation within a repeat accounts for the spread"
#: How :func:`cause_words` begins the words of a spread whose lowest repeat is only a
#: lower bound (:attr:`Repeated.lowest_bound_reason`).
LOWEST_BOUND = "the lowest repeat's answer is only a lower bound"


def effect(field: str, values, trial_s: float = 1.0) -> float:
    """How much a recorded quantity moved over the repeats, as a share comparable with an
    answer's highest over lowest less one: for a cost or a speed (ns, iterations per µs),
    its highest over its lowest less one; for a share of CPU time, its highest less its
    lowest; for milliseconds of a trial of ``trial_s`` seconds, the same as a share of it."""
    v = np.asarray(values, dtype=float)
    if field in _SHARES:
        return float(v.max() - v.min())
    if field in _MILLISECONDS:
        return float((v.max() - v.min()) / (1e3 * trial_s))
    return float(v.max() / v.min() - 1) if v.min() > 0 else float("inf")


def explain(results: pd.DataFrame, trials: pd.DataFrame, superseded: pd.DataFrame | None = None) -> pd.DataFrame:
    """What moved with one search's answer across its repeats: ``results`` its rows of
    ``search_results.csv`` (one per repeat), ``trials`` its rows of ``search_trials.csv``,
    ``superseded`` its rows of ``superseded_search_trials.csv`` (optional). Each repeat's
    value of a recorded quantity (:data:`CAUSES`) is its median over the repeat's
    full-length trials at its answer (those that passed it; all its full-length trials
    where none ran there; the mean for the disturbances, which come now and then), and, with ``superseded``, how many of the repeat's attempts
    were set aside as disturbed (:data:`SET_ASIDE`); each is set against the answers by
    Spearman's rank correlation.

    Returns one row per quantity recorded in every repeat, strongest first: ``field``,
    ``what`` (words), ``rho``, ``at_lowest`` and ``at_highest`` (its value in the repeat
    with the lowest and the highest answer), ``change`` (their relative difference),
    ``effect`` (:func:`effect`), ``moves`` (|ρ| at least :data:`MOVES_WITH` over at least
    :data:`MIN_REPEATS_TO_EXPLAIN` repeats, and an effect of at least
    :data:`MIN_SHARE_EXPLAINED` of the answers' highest over lowest less one), ``machine``
    (a cause in :data:`MACHINE_CAUSES`) and ``consequence`` (one of :data:`CONSEQUENCES`,
    which restate the answer). Empty with fewer than three repeats or no such column."""
    cols = ["field", "what", "rho", "at_lowest", "at_highest", "change", "effect", "moves", "machine", "consequence"]
    res = results.assign(repeat=repeat_of(results))
    res = res.dropna(subset=["lower_pps"]).sort_values("repeat")
    if len(res) < 3 or trials is None or not len(trials):
        return pd.DataFrame(columns=cols)
    full = full_length(trials)
    answers = res.set_index("repeat")["lower_pps"].astype(float)
    # the trials that passed at a repeat's answer decided it: what comes and goes within a
    # repeat (the host moving a virtual CPU) moves the answer through them, not through
    # the repeat's other trials
    at = full[np.isclose(full["load"].astype(float), full["repeat"].map(answers).astype(float), rtol=1e-9)]
    full = pd.concat([at, full[~full["repeat"].isin(set(at["repeat"]))]])
    lo_rep, hi_rep = answers.idxmin(), answers.idxmax()
    moved = answers.max() / answers.min() - 1 if answers.min() > 0 else float("inf")
    trial_s = float(full["duration"].max())
    rows = []
    per_field = {}
    for f in CAUSES:
        if f in full:
            col = pd.to_numeric(full[f], errors="coerce").groupby(full["repeat"])
            per_field[f] = (col.mean() if f in _DISTURBANCES else col.median()).reindex(answers.index)
    if superseded is not None:
        rep = repeat_of(superseded)
        per_field[SET_ASIDE] = rep.value_counts().reindex(answers.index, fill_value=0).astype(float)
    for f, per in per_field.items():
        what = CAUSES.get(f, "attempts set aside as disturbed")
        if per.isna().any() or per.nunique() < 2:
            continue
        rho = float(pd.Series(answers.to_numpy()).rank().corr(pd.Series(per.to_numpy()).rank()))
        a, b = float(per[lo_rep]), float(per[hi_rep])
        size = float("nan") if f == SET_ASIDE else effect(f, per.to_numpy(), trial_s)
        rows.append({"field": f, "what": what, "rho": rho, "at_lowest": a, "at_highest": b,
                     "change": (b - a) / a if a else float("nan"), "effect": size,
                     "moves": bool(len(answers) >= MIN_REPEATS_TO_EXPLAIN and abs(rho) >= MOVES_WITH - 1e-9
                                   and (f == SET_ASIDE or size >= MIN_SHARE_EXPLAINED * moved)),
                     "machine": f in MACHINE_CAUSES or f == SET_ASIDE, "consequence": f in CONSEQUENCES})
    out = pd.DataFrame(rows, columns=cols)
    return out.reindex(out["rho"].abs().sort_values(ascending=False).index).reset_index(drop=True)


def full_length(trials: pd.DataFrame) -> pd.DataFrame:
    """A search's trials at their repeat's full length (each repeat's longest trials: its
    final phase), with their ``repeat`` (:func:`repeat_of`)."""
    t = trials.assign(repeat=repeat_of(trials))
    return t[t["duration"] == t.groupby("repeat")["duration"].transform("max")]


@dataclass(frozen=True)
class Disagreement:
    """Where one repeat of a search ran a load whose full-length trials both passed and
    failed: there its loss crossed the threshold from one trial to the next on one
    testbed. When one repeat's own such loads span a range at least as wide as the
    repeats' answers do, the answers differ by no more than one repeat's own trials do.
    What made the trials disagree (a quantity that comes and goes within a repeat,
    recorded or not, or the loss's own noise) it does not say.

    Attributes
    ----------
    loads : int
        The loads that a repeat tried on two or more full-length trials, counted per repeat.
    mixed : int
        Of those, the ones where some trials passed and some failed.
    repeats : int
        The repeats with at least one such load.
    widest : int
        The repeat whose such loads span the widest range (-1 without one).
    low, high : float
        That repeat's lowest and highest such load, pps (NaN without one).
    answers : tuple of float
        The repeats' answers, pps (lowest to highest).
    """

    loads: int
    mixed: int
    repeats: int
    widest: int
    low: float
    high: float
    answers: tuple

    @property
    def width(self) -> float:
        """The widest repeat's range of loads whose trials disagreed, highest over lowest
        (1 for one load; NaN without one)."""
        return self.high / self.low if self.mixed and self.low > 0 else float("nan")

    @property
    def spread(self) -> float:
        """The answers' highest over their lowest (NaN with fewer than two)."""
        a = self.answers
        return max(a) / min(a) if len(a) > 1 and min(a) > 0 else float("nan")

    @property
    def accounts(self) -> bool:
        """Whether the trials' variation within a repeat accounts for the spread: over at
        least :data:`MIN_REPEATS_TO_EXPLAIN` repeats that moved, one repeat's own loads
        whose trials disagreed span at least as wide a range as the answers do."""
        return (len(self.answers) >= MIN_REPEATS_TO_EXPLAIN and self.spread > 1
                and self.width >= self.spread - 1e-9)

    def words(self) -> str:
        """Which repeat's trials disagreed where, set against the answers' range."""
        if not self.mixed:
            return (f"no repeat's trials at one load both passed and failed ({self.loads} "
                    f"load{'s' if self.loads != 1 else ''} tried more than once)")
        where = (f"at {self.low:,.0f} pps" if self.low == self.high
                 else f"from {self.low:,.0f} to {self.high:,.0f} pps")
        head = (f"repeat {self.widest + 1}'s trials at one load both passed and failed {where} (highest / lowest "
                f"{self.width:.3f}; {self.mixed} of the {self.loads} loads a repeat tried more than once, in "
                f"{self.repeats} of the {len(self.answers)} repeats)")
        if self.accounts:
            return head + ": the repeats' answers differ by no more than one repeat's own trials do"
        return head + f", a narrower range than the answers' ({self.spread:.3f})"


def disagreement(results: pd.DataFrame, trials: pd.DataFrame) -> Disagreement | None:
    """Where a search's repeats (``results``, one row per repeat, and their ``trials``,
    with ``passed``) ran a load on full-length trials (a repeat's longest) that both passed
    and failed (:class:`Disagreement`). Trials the generator could not keep up in, and
    trials that stayed disturbed after every repeat trial validation allowed, are left
    out. None without the columns."""
    if trials is None or not len(trials) or "passed" not in trials or results is None or not len(results):
        return None
    full = full_length(trials)
    for flagged in ("generator_limited", "disturbed"):
        if flagged in full:
            full = full[~stats.flag(full[flagged]).to_numpy()]
    per = (full.assign(ok=stats.flag(full["passed"]).to_numpy()).groupby(["repeat", "load"])["ok"]
           .agg(["count", "sum"]).reset_index())
    tried = per[per["count"] >= 2]
    mixed = tried[(tried["sum"] > 0) & (tried["sum"] < tried["count"])]
    answers = tuple(sorted(pd.to_numeric(results["lower_pps"], errors="coerce").dropna().astype(float)))
    if not len(mixed):
        return Disagreement(len(tried), 0, 0, -1, float("nan"), float("nan"), answers)
    spans = mixed.groupby("repeat")["load"].agg(["min", "max"]).astype(float)
    widest = (spans["max"] / spans["min"]).idxmax()
    return Disagreement(len(tried), len(mixed), len(spans), int(widest), float(spans.loc[widest, "min"]),
                        float(spans.loc[widest, "max"]), answers)


def set_aside_of(trials: pd.DataFrame, superseded: pd.DataFrame | None) -> pd.DataFrame | None:
    """The rows of ``superseded_search_trials.csv`` that belong to one search, whose rows of
    ``search_trials.csv`` are ``trials``: those of its experiment measured for one of its
    trials (the same ``repeat`` and ``probe``); None without both files' columns."""
    need = {"experiment", "probe"}
    if superseded is None or trials is None or not need <= set(superseded) or not need <= set(trials):
        return None
    def keys(df):
        rep = repeat_of(df)
        return list(zip(df["experiment"], rep, df["probe"].astype(int)))
    mine = set(keys(trials))
    return superseded[[k in mine for k in keys(superseded)]]


def cause_words(table: pd.DataFrame, within: Disagreement | None = None, answer: Repeated | None = None) -> str:
    """The recorded cause of a spread in words, from :func:`explain`'s table: the causes
    (not :data:`CONSEQUENCES`) that moved with the answer, the machine's named as such, or
    that none did, and then, with ``within`` (:func:`disagreement`) that accounts for the spread
    where no cause moved, that the trials' variation within a repeat does; then how the router's time per packet moved, which
    restates the answer. With ``answer`` (the repeats) whose lowest repeat is only a lower
    bound (:attr:`Repeated.lowest_bound_reason`), that alone: the router's own spread is not
    measured, and nothing the trials recorded is set against a bound."""
    if answer is not None and answer.lowest_bound_reason:
        return (f"{LOWEST_BOUND} ({answer.lowest_bound_reason}, at {answer.low:,.0f} pps): the router may have "
                "carried more in that repeat, so the spread says how far the search's limit moved, not how far the "
                "router's answer did")
    moved_any = False
    if table is None or not len(table):
        words = "no recorded quantity to set against the answers (too few repeats, or trials without the columns)"
    else:
        causes = table[~table["consequence"].astype(bool)]
        moved = causes[causes["moves"]]
        moved_any = bool(len(moved))
        if moved_any:
            words = "moved with the answer: " + "; ".join(
                f"{r.what}, ρ = {r.rho:.2f}: {r.at_lowest:.4g} in the lowest repeat, {r.at_highest:.4g} in the highest"
                + (" (the machine's)" if r.machine else "") for r in moved.itertuples())
        elif len(causes):
            best = causes.iloc[0]
            words = (f"no recorded cause moved with the answer enough to account for it (the closest: {best['what']}, "
                     f"ρ = {best['rho']:.2f}, {best['at_lowest']:.4g} in the lowest repeat, {best['at_highest']:.4g} "
                     "in the highest)")
        else:
            words = "no recorded cause to set against the answers"
    # where a recorded cause moved, it may be what made a load's trials disagree
    if within is not None and within.accounts and not moved_any:
        words += f"; {WITHIN_REPEAT}: {within.words()}"
    how = table[table["field"].isin(["napi_ns_per_packet", "engine_ns_per_packet", "router_ns_per_packet"])] \
        if table is not None and len(table) else ()
    if len(how):
        r = how.iloc[0]
        words += (f"; {r['what']} went from {r['at_highest']:.4g} in the highest repeat to {r['at_lowest']:.4g} in "
                  "the lowest (how the answer moved, not why)")
    return words
