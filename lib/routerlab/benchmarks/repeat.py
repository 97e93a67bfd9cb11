"""``bench repeat``: is a sweep repeatable on this machine? The same sweep twice in a row,
then, load by load, whether the second sweep's mean loss lies in the first's 95% interval.
With ``--campaign``, a campaign's searches instead, each repeated on fresh testbeds
(:func:`searches`, :func:`search_report`): each one's spread next to its goal, and what its
trials recorded that moved with it.

The two sweeps are the experiments ``<engine>-<scenario>-first`` and ``-second`` of one
dataset folder, at the same loads in pps (fractions of one generator ceiling). How a
load is judged:

- the first sweep's interval is the Student-t interval of its mean loss, df = K - 1
  (:func:`routerlab.analysis.stats.summarize`, the interval of every table), closed at both ends;
- a zero-width interval (every trial of the first sweep lost the same share, in practice
  none) holds only an equal mean: the load counts as repeated when the second sweep lost
  exactly as much (nothing), as not repeated otherwise; the report says how many loads
  were judged on such an interval;
- a load with one trial in the first sweep has no interval: it is not judged and not
  counted in the share (nor is a load measured in one sweep only);
- generator-limited trials are left out, as :func:`routerlab.analysis.stats.assess` leaves them
  out (they measure the generator, not the router), and the report says how many.

The *share* is the loads judged repeated over the loads judged.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from routerlab.errors import DataFormatError
from routerlab.progress import Progress, silent

#: The defaults of ``bench repeat``: loads as fractions of the generator's ceiling,
#: trials per load and seconds per trial.
LOADS_FRAC = "0.04,0.08,0.12,0.16,0.2"
RUNS = 5
DURATION_S = 1.0
#: Suffixes of the two sweeps' experiment ids.
FIRST, SECOND = "-first", "-second"
#: Loss ratios closer than this count as equal: far below one packet in a trial (rounding
#: of means and standard deviations of equal ratios).
TOLERANCE = 1e-12


@dataclass
class Repeatability:
    """Two sweeps of one engine and scenario, compared load by load.

    Attributes
    ----------
    name : str
        The pair's experiment id without its suffix (``<engine>-<scenario>``).
    table : pandas.DataFrame
        One row per load (ascending): ``offered_pps``; ``fraction`` of the generator's
        ceiling (NaN when the ceiling is not recorded); ``runs_first``, ``plr_first``
        (mean loss ratio), ``lcl95``, ``ucl95`` (the first sweep's interval, NaN for one
        trial), ``zero_width``; ``runs_second``, ``plr_second``; ``inside`` (True, False,
        or None when the load cannot be judged) and ``why`` (empty, or why it cannot be
        judged).
    when : tuple of str
        When each sweep was measured (``experiments.csv``; empty when not recorded).
    limited : dict
        Generator-limited trials left out, per sweep suffix (``"-first"``, ``"-second"``).
    """

    name: str
    table: object
    when: tuple[str, str] = ("", "")
    limited: dict = field(default_factory=dict)

    @property
    def judged(self) -> int:
        """Loads that could be judged."""
        return int(self.table["inside"].notna().sum())

    @property
    def repeated(self) -> int:
        """Loads whose second mean lies in the first's interval."""
        return int((self.table["inside"] == True).sum())  # noqa: E712  (object column: True, False, None)

    @property
    def share(self) -> float:
        """Share of the judged loads that repeated (ratio; NaN when none could be judged)."""
        return self.repeated / self.judged if self.judged else float("nan")


def compare(trials, name: str, ceiling_pps: float | None = None, when=("", "")) -> Repeatability:
    """Compare the sweeps ``name + "-first"`` and ``name + "-second"`` of a trial table
    (long form, the columns of ``trials.csv``), load by load (see the module docstring).

    Raises
    ------
    DataFormatError
        When either sweep has no trial in ``trials``.
    """
    import numpy as np
    import pandas as pd

    from routerlab.analysis import stats

    parts, limited = {}, {}
    for suffix in (FIRST, SECOND):
        t = trials[trials["experiment"] == name + suffix]
        if t.empty:
            raise DataFormatError("trials", None, f"no trials of {name + suffix}")
        if "generator_limited" in t.columns:
            lim = stats.flag(t["generator_limited"]).to_numpy()
            limited[suffix] = int(lim.sum())
            t = t[~lim]
        parts[suffix] = stats.summarize(t) if len(t) else pd.DataFrame(columns=stats.SUMMARY_COLUMNS)
    first = parts[FIRST][["offered_pps", "runs", "plr", "ci_half_width", "lcl95", "ucl95"]].rename(
        columns={"runs": "runs_first", "plr": "plr_first"})
    second = parts[SECOND][["offered_pps", "runs", "plr"]].rename(columns={"runs": "runs_second", "plr": "plr_second"})
    tab = first.merge(second, on="offered_pps", how="outer").sort_values("offered_pps", ignore_index=True)
    tab["fraction"] = tab["offered_pps"] / ceiling_pps if ceiling_pps else np.nan
    tab["zero_width"] = tab["ci_half_width"].abs() <= TOLERANCE
    inside = (tab["plr_second"] >= tab["lcl95"] - TOLERANCE) & (tab["plr_second"] <= tab["ucl95"] + TOLERANCE)
    why = np.select([tab["runs_first"].isna(), tab["runs_second"].isna(), tab["runs_first"] < 2],
                    ["not in the first sweep", "not in the second sweep", "one trial in the first sweep: no interval"],
                    "")
    tab["why"] = why
    tab["inside"] = [None if w else bool(i) for w, i in zip(why, inside)]
    cols = ["offered_pps", "fraction", "runs_first", "plr_first", "lcl95", "ucl95", "zero_width", "runs_second",
            "plr_second", "inside", "why"]
    return Repeatability(name, tab[cols], tuple(when), limited)


def read(folder, engine: str | None = None, scenario: str | None = None) -> list[Repeatability]:
    """Every pair of sweeps (``<name>-first`` and ``<name>-second``) in the dataset
    ``folder``, compared (:func:`compare`), in the order the first sweeps were measured;
    only ``engine``'s and ``scenario``'s when given (the trials' ``engine`` and
    ``scenario`` columns).

    Raises
    ------
    DataFormatError
        When the folder holds no such pair (naming the folder and what it holds).
    """
    from routerlab.analysis import datasets

    ds = datasets.read(folder)
    t = ds.trials
    if engine is not None and "engine" in t:
        t = t[t["engine"] == engine]
    if scenario is not None and "scenario" in t:
        t = t[t["scenario"] == scenario]
    names = [e.removesuffix(FIRST) for e in dict.fromkeys(t["experiment"]) if e.endswith(FIRST)]
    pairs = [n for n in names if (t["experiment"] == n + SECOND).any()]
    if not pairs:
        which = " ".join(x for x in (engine, scenario) if x)
        raise DataFormatError(folder, None, f"no pair of sweeps NAME{FIRST}, NAME{SECOND}"
                              f"{' of ' + which if which else ''} here (experiments: "
                              f"{', '.join(dict.fromkeys(ds.trials['experiment'])) or 'none'})")
    rec = ds.experiments.set_index("experiment") if len(ds.experiments) else None

    def fact(exp, col):
        if rec is None or exp not in rec.index or col not in rec.columns:
            return None
        return rec.loc[exp, col]

    out = []
    for n in pairs:
        ceiling = fact(n + FIRST, "generator_ceiling_pps")
        out.append(compare(t, n, ceiling if ceiling and ceiling == ceiling else None,
                           (fact(n + FIRST, "when") or "", fact(n + SECOND, "when") or "")))
    return out


def run(engine: str, scenario: str = "single-flow", out=Path("runs/bench-repeat"), *, loads_frac: str = LOADS_FRAC,
        ceiling_pps: float | None = None, runs: int = RUNS, duration: float = DURATION_S,
        announce=None, settings=None, progress: Progress = silent) -> list[Repeatability]:
    """Sweep ``engine`` in ``scenario`` twice in a row into the dataset ``out``, as the
    experiments ``<engine>-<scenario>-first`` and ``-second`` (each resumed if it is
    there already), and compare them. Both sweeps use one ceiling (``ceiling_pps``, else
    the one the first recorded, else measured), so their loads in pps are the same, on the
    testbed of ``settings`` (:class:`routerlab.testbed.settings.Settings`; None: the
    environment's). Needs root. ``progress`` is told each sweep's trials."""
    from routerlab.measuring import measurement
    from routerlab.testbed.settings import Settings

    settings = settings or Settings()
    _, sc = measurement.resolve(engine, scenario, settings=settings)
    name = f"{engine}-{sc.name}"
    ceiling = ceiling_pps or measurement.recorded_ceiling(out, name + FIRST, settings)
    for suffix in (FIRST, SECOND):
        measurement.measure(measurement.Request(engine, sc, out, loads_frac=loads_frac, ceiling_pps=ceiling, runs=runs,
                                                duration=duration, experiment=name + suffix, settings=settings),
                            announce=announce, progress=progress)
        ceiling = ceiling or measurement.recorded_ceiling(out, name + FIRST, settings)
    return read(out, engine, sc.name)


def _pct(x) -> str:
    """A loss ratio in percent, to 3 significant digits; exactly no loss is 0%."""
    return "-" if x != x else "0%" if x == 0 else f"{x * 100:.3g}%"


def report(results: list[Repeatability]) -> str:
    """Per pair of sweeps: the share of loads repeated, then one line per load (the first
    sweep's mean and interval, the second's mean, inside or not); then the shares of every
    pair, and how the loads were judged."""
    import pandas as pd

    lines = []
    for r in results:
        t = r.table
        zero = int((t["zero_width"] & t["inside"].notna()).sum())
        lines.append(f"{r.name}: second sweep's mean inside the first's 95% interval at {r.repeated} of {r.judged} "
                     f"loads ({_share(r)})" + (f"; {zero} of them judged on a zero-width interval" if zero else ""))
        if any(r.when):
            lines.append(f"  measured {r.when[0] or '?'} (first), {r.when[1] or '?'} (second)")
        rows = []
        for x in t.itertuples():
            interval = "-" if x.lcl95 != x.lcl95 else f"[{_pct(x.lcl95)}, {_pct(x.ucl95)}]"
            rows.append({
                "load": "-" if x.fraction != x.fraction else f"{x.fraction:.2f}",
                "offered_pps": f"{x.offered_pps:,.0f}",
                "first n": "-" if x.runs_first != x.runs_first else f"{x.runs_first:.0f}",
                "first mean": _pct(x.plr_first),
                "first 95% interval": interval + (" zero width" if x.zero_width else ""),
                "second n": "-" if x.runs_second != x.runs_second else f"{x.runs_second:.0f}",
                "second mean": _pct(x.plr_second),
                "inside": x.why or ("yes" if x.inside else "no"),
            })
        lines += ["  " + line for line in pd.DataFrame(rows).to_string(index=False).splitlines()]
        left = {k: v for k, v in r.limited.items() if v}
        if left:
            lines.append("  generator-limited trials left out: "
                         + ", ".join(f"{v} of the {k.strip('-')} sweep" for k, v in left.items()))
        lines.append("")
    if len(results) > 1:
        lines.append("shares: " + "; ".join(f"{r.name} {_share(r)}" for r in results))
    lines.append("judged: Student-t 95% interval of the first sweep's mean (df = K-1), closed; a zero-width interval "
                 "holds only an equal mean; one trial in the first sweep, or a load in one sweep only: not judged")
    return "\n".join(lines)


def _share(r: Repeatability) -> str:
    return "no load judged" if not r.judged else f"{r.repeated}/{r.judged} = {r.share:.0%}"


# -- searches ----------------------------------------------------------------------------------

def searches(folder) -> list[dict]:
    """Every search of the dataset ``folder`` searched more than once, with its spread and
    what moved with it: one dict per experiment, kind and method, in the order measured:
    ``experiment``, ``engine``, ``kind``, ``method``, ``answer``
    (:class:`routerlab.analysis.repeats.Repeated`), ``causes``
    (:func:`routerlab.analysis.repeats.explain`) and ``disagreement``
    (:func:`routerlab.analysis.repeats.disagreement`).

    Raises
    ------
    DataFormatError
        When the folder holds no repeated search.
    """
    from routerlab.analysis import datasets, repeats

    out = [{"experiment": r["experiment"], "engine": r["engine"], "kind": r["kind"], "method": r["method"],
            "answer": r["answer"], "causes": repeats.explain(g, t, set_aside), "disagreement": repeats.disagreement(g, t)}
           for r, g, t, set_aside in datasets.each_search(folder) if r["repeats"] >= 2]
    if not out:
        raise DataFormatError(folder, None, "no search here was searched more than once (search_results.csv's "
                                            "repeat column): measure with --repeats, or bench repeat --campaign")
    return out


def search_report(rows: list[dict]) -> str:
    """Per search: its repeats, median, lowest and highest, and the highest over the lowest
    next to the goal (:data:`routerlab.analysis.repeats.SPREAD_GOAL`); for a spread above the
    goal, what moved with the answer (:func:`routerlab.analysis.repeats.cause_words`); then
    how many met the goal, and how many of the others have a recorded cause, trials
    whose variation within a repeat accounts for them, or a lowest repeat that is only a
    lower bound."""
    from routerlab.analysis import repeats

    lines, met, named, within, bounded = [], 0, 0, 0, 0
    for r in rows:
        a = r["answer"]
        ok = a.spread == a.spread and a.spread <= repeats.SPREAD_GOAL
        met += ok
        lines.append(f"{r['experiment']} ({r['kind'].upper()}, {r['method']}): {a.words()}; highest / lowest "
                     f"{a.spread:.3f} (goal: at most {repeats.SPREAD_GOAL:g}){'' if ok else ' ABOVE THE GOAL'}")
        if not ok:
            words = repeats.cause_words(r["causes"], r.get("disagreement"), a)
            named += words.startswith("moved with")
            within += not words.startswith("moved with") and repeats.WITHIN_REPEAT in words
            bounded += bool(a.lowest_bound_reason)
            lines.append(f"  {words}")
    n = len(rows)
    lines.append(f"spread within the goal: {met} of {n}; of the {n - met} above it, {named} with a recorded quantity "
                 "that moved with the answer (Spearman's ρ over the repeats, |ρ| >= "
                 f"{repeats.MOVES_WITH:g} over at least {repeats.MIN_REPEATS_TO_EXPLAIN} repeats, changed by at least "
                 f"{repeats.MIN_SHARE_EXPLAINED:g} of the answer's change), {within} where the trials' variation within a "
                 "repeat accounts for it (one repeat's own loads whose trials both passed and failed span at least the "
                 f"answers' range), {bounded} whose lowest repeat is only a lower bound (the generator's limit or the "
                 "ceiling, not the router's answer)")
    return "\n".join(lines)
