"""Trial validation: a trial measured while the machine was disturbed is measured again.

A trial is *disturbed* when the hypervisor stole more than ``steal_threshold`` of the
CPU time while it ran (the ``steal`` that :func:`routerlab.traffic.run_trial` records, a
ratio in [0, 1]). A disturbed trial is repeated, at most ``max_repeats`` times (so at
most ``1 + max_repeats`` attempts), and every attempt is kept:

- the attempt the analysis uses is the first undisturbed one or, when every attempt was
  disturbed, the last one made, with ``disturbed`` true: it is the sweep's row in
  ``trials.csv``, whose ``attempt`` (1-based) says how many attempts it took;
- the attempts it replaced go to ``superseded_trials.csv`` beside it (a search's to
  ``superseded_search_trials.csv``), with the same columns. They are not in
  ``trials.csv`` because every reader of it (``datasets.read``, ``stats.assess``, the
  comparison, the figures, a notebook's own pandas) counts its rows as the trials of a
  load.

The threshold and the limit are in the experiment's environment record (``notes`` of
``experiments.csv``: ``steal_threshold=...; max_repeats=...``) and in the columns of
``search_results.csv``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterator, Mapping

from . import defaults, traffic
from .errors import ParameterError

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
        (:data:`routerlab.traffic.STEAL_FLAG`).
    max_repeats : int
        Repeats of one trial at most, after its first attempt; 0 keeps every first attempt.
    """

    steal_threshold: float = traffic.STEAL_FLAG
    max_repeats: int = defaults.MAX_REPEATS

    def __post_init__(self):
        if not 0 <= self.steal_threshold < 1:
            raise ParameterError("steal_threshold", f"must be a fraction in [0, 1), got {self.steal_threshold!r}")
        if isinstance(self.max_repeats, bool) or not isinstance(self.max_repeats, int) or self.max_repeats < 0:
            raise ParameterError("max_repeats", f"must be a whole number >= 0, got {self.max_repeats!r}")

    def disturbed(self, trial: Mapping) -> bool:
        """Whether a trial was disturbed; ``trial`` is its row (a mapping with the
        ``steal`` ratio, as :meth:`routerlab.traffic.TrialResult.row` gives it)."""
        return trial["steal"] > self.steal_threshold

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
        """The threshold and the limit, for an environment record."""
        return {"steal_threshold": self.steal_threshold, "max_repeats": self.max_repeats}
