"""``bench search``: our PDR/NDR search and MLRsearch (CSIT's) on one testbed, their
answers and the trial-seconds each took, side by side."""

from __future__ import annotations


def run(engine: str, scenario, out, *, kind: str = "both", duration: float = 2.0, announce=None,
        name: str | None = None, settings=None):
    """Both searches of ``engine`` in ``scenario`` (a preset or a YAML file; ``name`` names
    it in the experiment id, default the scenario as given) into ``out``, as experiment
    ``bench-search-ENGINE-SCENARIO``, each searched once (the two methods are set against
    each other on one testbed, in one run); ``duration``: seconds per final trial; ``settings``: the
    testbed's (:class:`routerlab.testbed.settings.Settings`; None: the environment's). Returns the
    results (:class:`routerlab.measuring.search.SearchResult`)."""
    from routerlab.measuring import measurement
    from routerlab.testbed.settings import Settings

    return measurement.measure(measurement.Request(
        engine, scenario, out, search=kind, duration=duration, methods=("routerlab", "mlrsearch"),
        experiment=f"bench-search-{engine}-{name or scenario}", repeats=1, settings=settings or Settings()),
        announce=announce)


def report(results) -> str:
    """Each answer, then the ratios of the two methods' answers and trial-seconds."""
    from routerlab.measuring import search

    return "\n".join(search.format_result(results) + search.format_ratios(results))
