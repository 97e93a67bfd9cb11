"""The generator's own ceiling: how fast it sends wired straight to the sink, the load every
sweep's fractions are fractions of."""

from __future__ import annotations

import statistics

from routerlab.testbed import namespaces
from routerlab.testbed.traffic import TrafficSpec, run_trial


def measure(duration_s: float = 2.0, spec: TrafficSpec | None = None, runs: int = 3, settings=None) -> float:
    """The generator's own ceiling in pps: as fast as it can, wired straight to the sink
    (the generator and testbed of ``settings``, :class:`routerlab.testbed.settings.Settings`;
    None: the environment's).

    Returns the median over ``runs`` trials of the offered rate (sent + refused per second).
    """
    spec = spec or TrafficSpec()
    with namespaces.make(settings, direct=True) as tb:
        rates = [run_trial(tb, 0, duration_s, spec).sent_pps for _ in range(runs)]
    return statistics.median(rates)
