"""The environment record of a testbed experiment (a sweep's, a search's): one row of
``experiments.csv`` saying how, where and when it was measured, with the engine's own
facts and what trial validation held the trials to."""

from __future__ import annotations

from pathlib import Path

from routerlab.analysis import datasets, scenarios
from routerlab.engines.base import Engine
from routerlab.errors import RouterlabError
from routerlab.measuring.validation import TrialValidation
from routerlab.testbed import traffic
from routerlab.testbed.interface import Testbed
from routerlab.testbed.namespaces import IDLE_NOTE


def write(out: Path, experiment: str, engine: Engine, tb: Testbed,
                       scenario: scenarios.Scenario, ceiling_pps: float, facts: dict,
                       validation: TrialValidation | None = None) -> dict:
    """Write the environment record of a testbed experiment to ``out/experiments.csv``
    (:func:`routerlab.analysis.datasets.record_environment`); ``facts`` are the engine's own (from
    its ``start``), noted with the trial validation's threshold and limit
    (:meth:`routerlab.measuring.validation.TrialValidation.facts`) and the stops the probe added up
    (:func:`routerlab.testbed.traffic.stop_total_over_ms`)."""
    ours = {**(validation or TrialValidation()).facts(), "stop_total_over_ms": traffic.stop_total_over_ms(tb.generator)}
    clash = sorted(set(facts) & set(ours))
    if clash:  # a note read back (routerlab.publish.facts) must mean one thing
        raise RouterlabError(f"{engine.name}'s facts name {', '.join(clash)}, which trial validation notes too")
    facts = {**facts, **ours}
    return datasets.record_environment(
        out, experiment, "routerlab testbed", **tb.environment(),
        pinning=f"{tb.chain()}; {IDLE_NOTE}{tb.idle_held}",
        engine=engine.name, engine_version=engine.version(),
        generator=traffic.generator_record(tb),
        generator_ceiling_pps=round(ceiling_pps), frame_size=scenario.frame_size,
        scenario=f"{scenario.name}: {scenario.describe()}", notes="; ".join(f"{k}={v}" for k, v in facts.items()),
        command=datasets.invocation())
