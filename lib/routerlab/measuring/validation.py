"""Trial validation: a trial measured while the machine was disturbed is measured again.

A trial is *disturbed* when the machine, not the router, may have lost its packets:

- the hypervisor stole more than ``steal_threshold`` of the CPU time while it ran (the
  ``steal`` that :func:`routerlab.testbed.traffic.run_trial` records, a ratio in [0, 1]); or
- it lost packets, the router's CPU stopped longer than the router's queue lasts at the
  offered load (``cpu_stop_ms`` > ``stop_floor_ms`` and ``cpu_stop_ms`` +
  ``probe_period_ms`` > ``queue_ms``: the probe of
  :func:`routerlab.testbed.traffic.cpu_stops` reads a stop of d ms as d - P to d), and the loss
  is no more than the packets offered during the trial's stops (the stops can account
  for it); or
- it lost packets, the hypervisor took some of the router's CPU time (``router_steal``, a
  share of the trial that ``/proc/stat`` counts in 10-ms ticks, however far below the
  threshold), the probe read a stop over the stop floor that may outlast the router's
  queue (where it ran), and the loss is no more than the packets offered during the time
  taken (that share of the trial's length); or
- it lost packets, the generator fell behind its schedule (``gen_late_ms``) longer than
  the probe's period, and the loss is no more than the packets offered during its lags.
  The generator then catches up (rlgen at no more than 1.05 times the rate, the XDP
  generator at 1.5 times),
  and whether the router's queue takes
  that depends on how full the queue is when it comes: near
  saturation (or on a token bucket the load keeps drained) it is not empty, so a lag
  shorter than the queue can cost packets too (the calibrate run at 28d8e4b kept a trial
  that lost 9 packets at the limiter behind a 9.2-ms lag, against 10.3 ms of queue). A
  lag is therefore held against such a loss however short it is next to the queue. A
  stop keeps the queue's test, because a busy router's own softirq work delays the probe
  too (below) while it drains the queue. A generator-limited trial, left out of the
  statistics anyway, is not judged on its lag.

A stop or a lag is held only against a loss it can account for (a lossless trial passed
in spite of it; a loss larger than the packets offered during all the stops, or all the
lags, is the router's; the packets offered during d seconds count as rate x d and one
burst of the generator, :data:`routerlab.testbed.traffic.BURST`, more: ``generator_burst``), and
only when the reading is longer than a chosen minimum: the stop floor
(:data:`routerlab.testbed.traffic.STOP_FLOOR_MS`) for a stop, the probe's period for a lag, since
shorter readings are common in trials that lost nothing. The floor is below the period
because the XDP chain's first queue lasts less than a period at high loads. The stops over
:func:`routerlab.testbed.traffic.stop_total_over_ms` (with rlgen
:data:`~routerlab.testbed.traffic.STOP_TOTAL_OVER_MS`; the lags over that) are added up
(``cpu_stops``, ``cpu_stopped_ms``; the lags in ``gen_lagged_ms``) because a router that runs at least as
fast as its load loses packets only while something holds it up, so the packets offered
meanwhile bound what the stops can cost, and one stop seldom comes alone; shorter ones
are left out of the total, since a saturated router's own work delays the probe that
long at nearly every wake-up. A trial recorded before those columns existed is held
against its longest stop or lag alone. A busy router's own softirq work holds
the probe back too, by up to a jiffy (4 ms), but drains the queue while it does: the loss
bound is what keeps those readings from repeating a saturated router's trials.
docs/testbed.md ("Disturbed trials are measured again", "Known behaviour of this
machine") has the measurements behind it.

A disturbed trial is repeated, at most ``max_repeats`` times (so at
most ``1 + max_repeats`` attempts), and every attempt is kept:

- the attempt the analysis uses is the first undisturbed one or, when every attempt was
  disturbed, the last one made, with ``disturbed`` true: it is the sweep's row in
  ``trials.csv``, whose ``attempt`` (1-based) says how many attempts it took;
- the attempts it replaced go to ``superseded_trials.csv`` beside it (a search's to
  ``superseded_search_trials.csv``), with the same columns. They are not in
  ``trials.csv`` because every reader of it (``datasets.read``, ``stats.assess``, the
  comparison, the figures, a notebook's own pandas) counts its rows as the trials of a
  load.

The threshold, the probe's period, the limit, the stop floor and the router's queue are
in the experiment's environment record (``notes`` of ``experiments.csv``:
``router_queue_packets=...; steal_threshold=...; probe_period_ms=...; max_repeats=...;
stop_floor_ms=...; generator_burst=...; router_steal_held=...``) and in the columns of ``search_results.csv``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Iterator, Mapping

from routerlab import defaults
from routerlab.analysis.stats import flag
from routerlab.errors import ParameterError

#: Name of the file of superseded sweep attempts, beside ``trials.csv``.
SUPERSEDED_TRIALS = "superseded_trials.csv"
#: Name of the file of superseded search attempts, beside ``search_trials.csv``.
SUPERSEDED_SEARCH_TRIALS = "superseded_search_trials.csv"


@dataclass(frozen=True)
class TrialValidation:
    """When a trial counts as disturbed, and how often it is measured again.

    Attributes
    ----------
    steal_threshold : float
        A trial whose steal (share of CPU time the hypervisor took, ratio in [0, 1)) is
        above this is disturbed. Default: the threshold of the ``steal_flagged`` column
        (:data:`routerlab.testbed.traffic.STEAL_FLAG`).
    probe_period_ms : float
        The CPU-stop probe's period P, milliseconds (default
        :data:`routerlab.testbed.traffic.STOP_PROBE_PERIOD_MS`): it reads a stop of d ms as d - P
        to d, so a reading counts as longer than the queue when it might have been, when
        the reading and P together are; a lag of P or less is not held against a trial.
    stop_floor_ms : float
        A stop the probe read as this or less, milliseconds, is not held against a trial
        (default :data:`routerlab.testbed.traffic.STOP_FLOOR_MS`; records made before it existed
        were judged with the probe's period as the floor).
    max_repeats : int
        Repeats of one trial at most, after its first attempt; 0 keeps every first attempt.
    generator_burst : int
        Packets the generator sends at once (default :data:`routerlab.testbed.traffic.BURST`): the
        packets offered during d seconds count as rate x d and this many more (records made
        before it existed were judged with 0).
    router_steal_held : bool
        Whether steal on the router's CPU below the threshold is held against a loss it can
        account for (records made before it existed were judged without).
    """

    steal_threshold: float = defaults.STEAL_FLAG
    probe_period_ms: float = defaults.STOP_PROBE_PERIOD_MS
    max_repeats: int = defaults.MAX_REPEATS
    stop_floor_ms: float = defaults.STOP_FLOOR_MS
    generator_burst: int = defaults.BURST
    router_steal_held: bool = True

    def __post_init__(self):
        if not 0 <= self.steal_threshold < 1:
            raise ParameterError("steal_threshold", f"must be a fraction in [0, 1), got {self.steal_threshold!r}")
        p = self.probe_period_ms
        if isinstance(p, bool) or not (isinstance(p, (int, float)) and 0 <= p < math.inf):
            raise ParameterError("probe_period_ms", f"must be >= 0 milliseconds, got {p!r}")
        f = self.stop_floor_ms
        if isinstance(f, bool) or not (isinstance(f, (int, float)) and 0 <= f < math.inf):
            raise ParameterError("stop_floor_ms", f"must be >= 0 milliseconds, got {f!r}")
        if isinstance(self.max_repeats, bool) or not isinstance(self.max_repeats, int) or self.max_repeats < 0:
            raise ParameterError("max_repeats", f"must be a whole number >= 0, got {self.max_repeats!r}")
        b = self.generator_burst
        if isinstance(b, bool) or not isinstance(b, int) or b < 0:
            raise ParameterError("generator_burst", f"must be a whole number >= 0, got {b!r}")
        if not isinstance(self.router_steal_held, bool):
            raise ParameterError("router_steal_held", f"must be true or false, got {self.router_steal_held!r}")

    def why_disturbed(self, trial: Mapping) -> str:
        """What disturbed a trial, in words ("" when nothing did).

        ``trial`` is its row: a mapping with the ``steal`` ratio and, when probed,
        ``lost``, the offered rate (``offered_pps``, or ``load`` as in
        ``search_trials.csv``), ``cpu_stop_ms``, ``gen_late_ms``, ``queue_ms`` and
        ``generator_limited``, as :meth:`routerlab.testbed.traffic.TrialResult.row` gives it or a
        CSV reader reads it back, and ``cpu_stops``, ``cpu_stopped_ms``, ``gen_lagged_ms``,
        ``router_steal`` and the trial's length (``duration_s``, or ``duration`` as in
        ``search_trials.csv``) where it has them. A missing number counts as unknown: with
        ``lost`` unknown no stop is held against the trial; with the queue or the rate
        unknown, a stop is held against any loss; without the totals, the longest stop
        (or lag) alone is what can account for the loss.
        """
        why = []
        steal = _number(trial.get("steal"))
        if steal is not None and steal > self.steal_threshold:
            why.append(f"steal {steal:.1%} > {self.steal_threshold:.1%}")
        lost = _number(trial.get("lost")) or 0
        if lost <= 0:
            return "; ".join(why)
        queue = _number(trial.get("queue_ms"))
        rate = _number(trial["offered_pps"] if "offered_pps" in trial else trial.get("load"))
        lasts = f"the queue lasts {queue:.1f} ms" if queue is not None else "queue unknown"

        def fits(total):
            """Whether the loss fits in the packets offered during ``total`` ms (a burst
            more than rate * total: the generators send in bursts)."""
            return not rate or lost <= rate * total / 1e3 + self.generator_burst

        def in_all(total, n=None):
            """', total ms in all [over n stops]', said when the total is more than the longest."""
            return f", {total:.1f} ms in all" + (f" over {n:.0f} stops" if n else "")

        # a reading at or below the floor is not held against a trial: a chosen
        # minimum, as such readings are common in trials that lost nothing
        stop = _number(trial.get("cpu_stop_ms"))
        # the probe reads a stop of d ms as d - P to d: each stop may have lasted P more
        longest = stop + self.probe_period_ms if stop is not None else None
        # a stop read over the floor that may have outlasted the router's queue
        outlasts = stop is not None and stop > self.stop_floor_ms and (queue is None or longest > queue)
        if outlasts:
            n, stopped = _number(trial.get("cpu_stops")), _number(trial.get("cpu_stopped_ms"))
            total = max(longest, stopped + n * self.probe_period_ms if n is not None and stopped is not None else 0)
            if fits(total):
                why.append(f"router CPU stopped {stop:.1f}-{longest:.1f} ms" + (in_all(total, n) if total > longest else "")
                           + f" ({lasts}) and {lost:.0f} packets were lost")
        # the hypervisor took the router's CPU for a while: /proc/stat reads its steal in
        # ticks (10 ms), below the threshold above for a 1-s trial, and the probe reads each
        # piece of it as a stop too short to add up. The share is of a span a little longer
        # than the trial (the generator may finish late), so share x length is at most the
        # time stolen, to within a tick either way
        router_steal = _number(trial.get("router_steal"))
        seconds = _number(trial["duration_s"] if "duration_s" in trial else trial.get("duration"))
        if self.router_steal_held and router_steal and seconds and (stop is None or outlasts):
            stolen = router_steal * seconds * 1e3
            if fits(stolen):
                why.append(f"steal on the router's CPU {stolen:.0f} ms" + (f", stops up to {stop:.1f} ms" if stop else "")
                           + f", and {lost:.0f} packets were lost")
        lag = _number(trial.get("gen_late_ms"))
        if lag is not None and lag > self.probe_period_ms and not flag([trial.get("generator_limited")])[0]:
            lagged = _number(trial.get("gen_lagged_ms"))
            total = max(lag, lagged or 0)
            # a lag's burst may meet a queue that is not empty: held however short it is
            if fits(total):
                why.append(f"generator fell behind {lag:.1f} ms" + (in_all(total) if total > lag else "")
                           + f" ({lasts}) and {lost:.0f} packets were lost")
        return "; ".join(why)

    def disturbed(self, trial: Mapping) -> bool:
        """Whether a trial was disturbed (:meth:`why_disturbed` names something)."""
        return bool(self.why_disturbed(trial))

    def attempts(self, measure: Callable[[], Mapping], made: int = 0) -> Iterator[tuple[dict, bool]]:
        """Measure one trial until an attempt is undisturbed or the repeats are used up.

        Parameters
        ----------
        measure : callable
            ``measure()`` runs one attempt and returns its row (see :meth:`disturbed`).
        made : int
            Attempts of this trial already made (by an interrupted run being resumed):
            they count against ``max_repeats``, and the numbering goes on from them.

        Yields
        ------
        (row, kept)
            Every attempt as it finishes: its row with ``attempt`` (1-based) and
            ``disturbed`` added; ``kept`` is true for the last, the one the analysis uses.
        """
        n = made
        while True:
            n += 1
            row = dict(measure())
            row.update(attempt=n, disturbed=self.disturbed(row))
            kept = not row["disturbed"] or n > self.max_repeats
            yield row, kept
            if kept:
                return

    def facts(self) -> dict:
        """The thresholds, the probe's period, the limit, the stop floor, the burst and
        whether the router CPU's steal is held (1 or 0), for an environment record."""
        return {"steal_threshold": self.steal_threshold, "probe_period_ms": self.probe_period_ms,
                "max_repeats": self.max_repeats, "stop_floor_ms": self.stop_floor_ms,
                "generator_burst": self.generator_burst, "router_steal_held": int(self.router_steal_held)}


def _number(x) -> float | None:
    """A recorded number, or None for a missing one (None, "", NaN)."""
    if x is None or x == "":
        return None
    x = float(x)
    return None if math.isnan(x) else x
