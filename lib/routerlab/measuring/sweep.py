"""Measuring: a fixed sweep of loads (K trials of T seconds each) on one engine.

Trials are appended to the dataset as they finish (:class:`routerlab.analysis.datasets.TrialWriter`);
rerunning the same command resumes where an interrupted sweep stopped. Each experiment
gets an environment record in ``experiments.csv``: kernel, CPU, pinning, engine and
generator versions, the generator's measured ceiling, frame size, date.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from routerlab.analysis import datasets, scenarios
from routerlab.measuring import drops, record
from routerlab.engines import registry
from routerlab.engines.base import Engine

from routerlab.testbed import ceiling, traffic
from routerlab.testbed import capabilities, namespaces
from routerlab.errors import ParameterError
from routerlab.progress import Progress, silent, Step
from routerlab.testbed.settings import Settings
from routerlab.measuring.validation import SUPERSEDED_TRIALS, TrialValidation

#: Columns of trials.csv written by the testbed.
TRIAL_FIELDS = ["experiment", "engine", "scenario", "offered_pps", "trial", "duration_s", "tx", "rx",
                "sent_pps", "refused", "generator_limited", "cpu_load", "steal", "steal_flagged",
                *traffic.PROBED_FIELDS, *traffic.SPREAD_FIELDS, "attempt", "disturbed", "engine_forwarded",
                *traffic.ATTRIBUTED_FIELDS, "started_at"]


@dataclass
class SweepPlan:
    """What to measure.

    Attributes
    ----------
    engine : str
        Engine name (:func:`routerlab.engines.names`).
    scenario : routerlab.analysis.scenarios.Scenario
        Traffic and task.
    loads : list of float
        Offered loads in pps (ascending after validation).
    runs : int
        Trials per load (K).
    duration : float
        Seconds per trial (T).
    experiment : str
        Experiment id (default: engine + scenario).
    """

    engine: str
    scenario: scenarios.Scenario
    loads: list[float]
    runs: int = 10
    duration: float = 2.0
    experiment: str = ""

    def __post_init__(self):
        if self.runs < 1:
            raise ParameterError("runs", f"must be >= 1, got {self.runs}")
        if not self.duration > 0:
            raise ParameterError("duration", f"must be > 0 seconds, got {self.duration}")
        if not self.loads:
            raise ParameterError("loads", "give at least one load")
        bad = [x for x in self.loads if not x > 0]
        if bad:
            raise ParameterError("loads", f"loads must be > 0 pps, got {bad[0]:g}")
        self.loads = sorted(set(float(x) for x in self.loads))
        self.experiment = self.experiment or f"{self.engine}-{self.scenario.name}"

    @property
    def seconds(self) -> float:
        """Wall time estimate of the whole sweep (trials plus ~0.3 s overhead each)."""
        return len(self.loads) * self.runs * (self.duration + 0.3)


def parse_loads(loads: str | None = None, loads_frac: str | None = None, ceiling_pps: float | None = None) -> list[float]:
    """Loads in pps from ``"50000,100000"`` or fractions ``"0.1,0.2"`` of the generator's ceiling."""
    if bool(loads) == bool(loads_frac):
        raise ParameterError("--loads", "give exactly one of --loads (pps) and --loads-frac")
    text = loads or loads_frac
    try:
        vals = [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise ParameterError("--loads" if loads else "--loads-frac", f"not a comma-separated list of numbers: {text!r}") from None
    if loads_frac:
        if any(not 0 < v <= 1.5 for v in vals):
            raise ParameterError("--loads-frac", "fractions must be in (0, 1.5]")
        if not ceiling_pps:
            raise ParameterError("--loads-frac", "needs the generator's ceiling")
        vals = [round(v * ceiling_pps) for v in vals]
    return vals


def run(plan: SweepPlan, out: Path, *, engine: Engine | None = None, ceiling_pps: float | None = None,
        progress: Progress = silent, validation: TrialValidation | None = None,
        settings: Settings | None = None) -> Path:
    """Measure ``plan`` into the dataset folder ``out`` (resuming what is already there).
    :func:`routerlab.measuring.measurement.measure` checks the plan first; this runs it.

    A disturbed trial is measured again (``validation``, default
    :class:`routerlab.measuring.validation.TrialValidation`): ``trials.csv`` gets the attempt the
    analysis uses, ``superseded_trials.csv`` the ones it replaced.

    Parameters
    ----------
    engine : routerlab.engines.Engine, optional
        The engine of ``plan.engine``, already resolved and checked.
    ceiling_pps : float, optional
        The generator's ceiling, if already measured; else it is measured first
        (generator straight into the sink).
    progress : routerlab.progress.Progress, optional
        Told the trials to measure (a first step, 0 of them done), then each trial as it
        ends, and each disturbed attempt repeated (its ``note`` says why).
    validation : routerlab.measuring.validation.TrialValidation, optional
        When a trial is disturbed and how often it is repeated.
    settings : routerlab.testbed.settings.Settings, optional
        How the testbed is made (its generator, idle mode, factory); None: the environment's.

    Returns
    -------
    pathlib.Path
        The dataset folder.
    """
    validation = validation or TrialValidation()
    eng = engine or registry.get(plan.engine)
    out = Path(out)
    settings = settings or Settings()
    _check_resumable(out, plan, capabilities.runnable(settings.generator))
    writer = datasets.TrialWriter(out, TRIAL_FIELDS)
    done = writer.done()
    todo = [(o, k) for o in plan.loads for k in range(plan.runs) if (plan.experiment, o, k) not in done]
    spec = traffic.TrafficSpec.for_scenario(plan.scenario)
    if not todo:
        writer.close()
        return out
    if ceiling_pps is None:
        ceiling_pps = ceiling.measure(spec=spec, settings=settings)
    with writer, namespaces.make(settings) as tb, drops.attached(tb, eng := tb.router(eng)) as dc:
        facts = {**eng.bring_up(tb, plan.scenario), "loss_attribution": "on" if dc is not None else "off"}
        record.write(out, plan.experiment, eng, tb, plan.scenario, ceiling_pps, facts, validation)
        progress(Step(f"{plan.engine} {plan.scenario.name}", 0, len(todo)))
        made = _superseded_counts(out / SUPERSEDED_TRIALS, plan.experiment)
        superseded = None
        try:
            for i, (o, k) in enumerate(todo):
                def trial():
                    f0 = eng.forwarded(tb)
                    eng.costs(tb)  # an engine's clocks count from its last read: this trial's alone
                    r = traffic.run_trial(tb, o, plan.duration, spec, drops=dc,
                                          probe_period_ms=validation.probe_period_ms)
                    costs = eng.costs(tb)
                    f1 = eng.forwarded(tb)
                    return {"experiment": plan.experiment, "engine": plan.engine, "scenario": plan.scenario.name,
                            "trial": k, "engine_forwarded": (f1 - f0) if f0 is not None else "", **r.row(),
                            "drop_rows": r.drop_rows, "costs": costs}

                where = f"{plan.engine} {plan.scenario.name} @ {o:.0f} pps"
                for row, kept in validation.attempts(trial, made[o, k]):
                    if kept:
                        writer.write(row)
                        drops.write_rows(out, plan.experiment, o, k, row["drop_rows"])
                        write_costs(out, plan.experiment, o, k, row["costs"])
                    else:
                        if superseded is None:
                            superseded = datasets.TrialWriter(out, TRIAL_FIELDS, SUPERSEDED_TRIALS)
                        superseded.write(row)
                        progress(Step(where, i, len(todo), f"repeating, {validation.why_disturbed(row)}"))
                progress(Step(where, i + 1, len(todo)))
        finally:
            eng.stop(tb)
            if superseded is not None:
                superseded.close()
    return out


#: engine_costs.csv, beside trials.csv: the engine's own time per packet by stage, per trial.
COSTS_FILE = "engine_costs.csv"


def write_costs(out, experiment: str, offered_pps: float, trial: int, costs: dict[str, float]) -> None:
    """Append one trial's :meth:`routerlab.engines.base.Engine.costs` (none: nothing) to
    ``out/engine_costs.csv``."""
    if not costs:
        return
    with datasets.TrialWriter(out, list(datasets.KINDS[COSTS_FILE]), COSTS_FILE) as w:
        for stage, ns in costs.items():
            w.write({"experiment": experiment, "offered_pps": offered_pps, "trial": trial, "stage": stage,
                     "ns_per_packet": round(ns, 2)})


def _superseded_counts(path: Path, experiment: str):
    """Superseded attempts of each (load, trial) of ``experiment`` already on disk (a
    resumed trial's attempts go on from them and count against the limit)."""
    import csv
    from collections import Counter

    if not path.is_file():
        return Counter()
    with open(path, newline="") as fh:
        return Counter((float(r["offered_pps"]), int(r["trial"])) for r in csv.DictReader(fh)
                       if r["experiment"] == experiment)


def _check_resumable(out: Path, plan: SweepPlan, generator: str):
    """Refuse to add trials to an experiment that was measured with another engine,
    scenario or generator."""
    if not (out / "experiments.csv").is_file():
        return
    old = datasets.read_experiments(out)
    old = old[old["experiment"] == plan.experiment]
    if old.empty:
        return
    want = f"{plan.scenario.name}: {plan.scenario.describe()}"
    rec = old.iloc[0]
    if rec.get("engine") != plan.engine or rec.get("scenario") != want:
        raise ParameterError("experiment", f"{plan.experiment!r} in {out} was measured with engine "
                             f"{rec.get('engine')}, scenario {rec.get('scenario')!r}; resuming it with "
                             f"{plan.engine}, {want!r} would mix them: give --experiment or another --out")
    theirs = datasets.generator_kind(rec.get("generator"))
    if theirs and theirs != generator:
        raise ParameterError("generator", f"{plan.experiment!r} in {out} was measured with the {theirs} generator; "
                             f"resuming it with {generator} would mix them: give --generator {theirs}, "
                             "--experiment or another --out")
