"""One way in to measuring a router on the testbed.

The command line (``routerlab measure``, ``bench search``, ``bench engines``), the
notebooks and the comparison campaign all describe a measurement as a :class:`Request`
and call :func:`measure` with it. Making the request resolves and checks the engine and the
scenario once and checks every parameter, before anything needs root; ``measure`` checks
root once, measures the generator's ceiling when the loads need it, and then runs a fixed
sweep (:mod:`routerlab.measuring.sweep`, trials appended to ``trials.csv``) or a PDR/NDR search
(:mod:`routerlab.measuring.search`, ``search_results.csv``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pandas as pd

from routerlab import defaults
from routerlab.engines import registry
from routerlab.analysis import scenarios, stats
from routerlab.testbed import ceiling, traffic
from routerlab.defaults import SEARCH_KINDS  # noqa: F401  (the search kinds measure accepts)
from routerlab.engines.base import Engine
from routerlab.errors import ParameterError
from routerlab.progress import Progress, silent
from routerlab.analysis.scenarios import Scenario
from routerlab.testbed.capabilities import require_root
from routerlab.testbed.settings import Settings



def resolve(engine: str | Engine, scenario: str | Scenario, config=None, router=None, control: str | None = None,
            *, settings: Settings | None = None, **overrides) -> tuple[Engine, Scenario]:
    """The engine (by name, or an engine already made) and the scenario (a preset, a YAML file or a Scenario with
    ``overrides`` such as ``rules=50``), checked against each other: an engine that is
    missing, or lacks a feature the scenario needs, is refused here. ``config`` is a
    router configuration of one's own for the engine to run (click, fastclick); ``router``
    the commands of the ``exec`` engine
    (:class:`routerlab.engines.external.Commands`); ``control`` bmv2's control plane
    (``p4runtime`` or ``thrift``, :attr:`routerlab.engines.bmv2.Bmv2.control`); ``settings`` the
    testbed's (:class:`routerlab.testbed.settings.Settings`): beyond one machine, the engine
    is checked on the router's host."""
    overrides = {k: v for k, v in overrides.items() if v is not None}
    if isinstance(scenario, Scenario):
        if overrides:
            raise ParameterError("scenario", "overrides go with a scenario name, not a Scenario")
        sc = scenario
    else:
        sc = scenarios.load(scenario, **overrides)
    eng = registry.get(engine) if isinstance(engine, str) else engine
    if config is not None:
        eng.use_config(config)
    if router is not None:
        if not hasattr(eng, "use_commands"):
            raise ParameterError("start", f"engine {engine} is started by routerlab; only --engine exec "
                                          "takes --start and the commands that go with it")
        eng.use_commands(router)
    if control is not None:
        if not hasattr(eng, "control"):
            raise ParameterError("control", f"engine {engine} has one control plane; only bmv2 takes --control")
        if control not in eng.controls:
            raise ParameterError("control", f"{control!r}: expected one of {', '.join(eng.controls)}")
        eng.control = control
    if settings is not None and settings.beyond_one_machine:
        # the engine is the router host's: checked there
        if eng.one_machine:
            raise ParameterError("engine", f"{eng.name} runs on the namespace testbed only: {eng.one_machine}")
        Engine.check(eng, sc)
        settings.check_engine(eng, sc)
    else:
        eng.check(sc)
    return eng, sc


def generator_ceiling(sc: Scenario | None = None, announce: Callable[[str], None] | None = None,
                      settings: Settings | None = None) -> float:
    """The generator's ceiling in pps for the scenario's traffic (generator straight into the
    sink, on the testbed of ``settings``; None: the environment's), in whole pps. Needs root."""
    announce = announce or (lambda msg: None)
    require_root(settings)
    announce("measuring the generator's ceiling (generator straight into the sink)...")
    # whole pps, as experiments.csv records it: a run resumed with the recorded ceiling (or
    # bench repeat's second sweep) then offers the same loads to the pps
    pps = float(round(ceiling.measure(spec=traffic.TrafficSpec.for_scenario(sc) if sc else None, settings=settings)))
    announce(f"generator ceiling: {pps:.0f} pps")
    return pps


def recorded_ceiling(out, experiment: str | None = None, settings: Settings | None = None) -> float | None:
    """The generator ceiling an earlier (interrupted) run recorded in ``out/experiments.csv``
    for ``experiment`` (any experiment when None), measured with the generator a testbed of
    ``settings`` (None: the environment's) takes: resuming with it gives the same loads in
    pps, so the trials already there count."""
    from routerlab.analysis import datasets
    from routerlab.testbed.capabilities import runnable

    path = Path(out) / "experiments.csv"
    if not path.is_file():
        return None
    rec = datasets.read_experiments(path)
    if experiment is not None:
        rec = rec[rec["experiment"] == experiment]
    now = runnable((settings or Settings()).generator)
    rec = rec[[datasets.generator_kind(g) in ("", now) for g in rec.get("generator", pd.Series(dtype=str))]]
    vals = rec.get("generator_ceiling_pps", pd.Series(dtype=float)).dropna()
    return float(vals.iloc[0]) if len(vals) else None


def check(*, loads: str | None = None, loads_frac: str | None = None, runs: int = 10, duration: float = 2.0,
          search: str | None = None, pdr: float = stats.PDR_FRACTION, methods=("routerlab",),
          steal_threshold: float | None = None, max_repeats: int | None = None, repeats: int | None = None):
    """Check the parameters of a measurement (those of :class:`Request`) that need neither
    root nor an engine, before anything is measured: the one check that a request, a
    campaign file and the comparison all make. Returns the trial validation they give.

    Raises
    ------
    ParameterError
        Naming the parameter.
    ToolMissing
        A search method whose package is not installed (MLRsearch).
    """
    from routerlab.measuring import search as search_mod
    from routerlab.measuring import sweep
    from routerlab.measuring.validation import TrialValidation

    validation = TrialValidation(**{k: v for k, v in (("steal_threshold", steal_threshold),
                                                      ("max_repeats", max_repeats)) if v is not None})
    stats.VerdictParams(pdr=pdr)  # a bad fraction is refused now, not after the measurement
    if search is not None and search not in SEARCH_KINDS:
        raise ParameterError("search", f"must be one of {', '.join(SEARCH_KINDS)}, got {search!r}")
    if search is not None and (loads or loads_frac):
        raise ParameterError("loads", "a search chooses its own loads: give --loads/--loads-frac or --search")
    if search is not None and "mlrsearch" in methods:
        search_mod.require_mlrsearch()
    if repeats is not None and search is None:
        raise ParameterError("repeats", "a search is repeated; a sweep repeats its trials at each load: give --runs")
    if repeats is not None and (isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1):
        raise ParameterError("repeats", f"must be a whole number of at least 1, got {repeats!r}")
    if search is None:
        # fractions against a nominal ceiling (the real one needs root), large enough that
        # none rounds to 0 pps; a scenario's name does not matter to the plan's checks
        sweep.SweepPlan("", Scenario(name="check"), sweep.parse_loads(loads, loads_frac, 1e6), runs=runs,
                        duration=duration)
    elif not duration > 0:
        raise ParameterError("duration", f"must be > 0 seconds, got {duration}")
    return validation


@dataclass(frozen=True)
class Request:
    """One measurement of ``engine`` in ``scenario`` into the dataset folder ``out``, with its
    options: what a command, a campaign step or a notebook asks :func:`measure` for. Checked
    when made, before anything needs root: the engine and the scenario against each other
    (:func:`resolve`, on the router's host beyond one machine), then every other parameter
    (:func:`check`), so a bad value is refused at once, naming its parameter.

    Parameters
    ----------
    engine : str or routerlab.engines.base.Engine
        The engine, by name or already made.
    scenario : str or routerlab.analysis.scenarios.Scenario
        A preset name, a YAML file or a Scenario.
    out : path-like
        The dataset folder (created, or resumed if it holds this experiment).
    loads, loads_frac : str
        For a sweep, exactly one: loads in pps (``"50000,100000"``) or fractions of the
        generator's ceiling (``"0.1,0.2"``).
    runs, duration : int, float
        Trials per load (K) and seconds per trial (T); for a search, ``duration`` is the
        length of its final trials.
    search : {"pdr", "ndr", "both"}, optional
        Search instead of sweeping, between :data:`routerlab.defaults.SEARCH_LOW_FRACTION` of the
        ceiling and the ceiling.
    pdr : float
        PDR fraction of the search (a ratio: 0.005 is PDR@0.5%).
    methods : tuple of str
        The search methods ("routerlab", "mlrsearch").
    ceiling_pps : float, optional
        The generator's ceiling if already known; else measured when needed.
    experiment : str
        Experiment id (default ENGINE-SCENARIO).
    rules, routes, frame_size : int, optional
        Overrides of the scenario's knobs.
    config : path-like, optional
        A router configuration of one's own for the engine to run instead of routerlab's
        (click, fastclick: e.g. a course exercise's router); it must take the testbed's
        defines, see :meth:`routerlab.engines.click.ClickEngine.use_config`.
    router : routerlab.engines.external.Commands, optional
        For ``engine="exec"``: the commands that start, check and stop a router of one's
        own.
    control : {"p4runtime", "thrift"}, optional
        For ``engine="bmv2"``: its control plane (default P4Runtime where
        ``simple_switch_grpc`` is installed); the environment record says which.
    repeats : int, optional
        For a search: how many times it is searched, each time on a fresh testbed with the
        engine started again (default :data:`routerlab.defaults.SEARCH_REPEATS`); its
        answer is their median with their range (:mod:`routerlab.analysis.repeats`).
        Repeats a folder holds already, searched the same way, are kept (a rerun resumes).
    steal_threshold, max_repeats : float, int, optional
        Trial validation (:class:`routerlab.measuring.validation.TrialValidation`, whose defaults
        stand for None): a trial with more steal than ``steal_threshold`` (ratio) is
        measured again, at most ``max_repeats`` times.
    settings : routerlab.testbed.settings.Settings
        The testbed's settings (generator, idle mode, a testbed beyond one machine);
        default: the environment's.
    """

    engine: str | Engine
    scenario: str | Scenario
    out: str | Path
    loads: str | None = None
    loads_frac: str | None = None
    runs: int = 10
    duration: float = 2.0
    search: str | None = None
    pdr: float = stats.PDR_FRACTION
    methods: tuple[str, ...] = ("routerlab",)
    ceiling_pps: float | None = None
    experiment: str = ""
    rules: int | None = None
    routes: int | None = None
    frame_size: int | None = None
    config: str | Path | None = None
    router: object = None
    control: str | None = None
    steal_threshold: float | None = None
    max_repeats: int | None = None
    repeats: int | None = None
    settings: Settings = field(default_factory=Settings)
    #: The engine and the scenario, resolved and checked (:func:`resolve`; set when made).
    resolved: tuple = field(init=False, repr=False, compare=False)
    #: The trial validation the request gives (set when it is checked).
    validation: object = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "methods", tuple(self.methods))
        object.__setattr__(self, "resolved", resolve(
            self.engine, self.scenario, self.config, self.router, self.control, settings=self.settings,
            rules=self.rules, routes=self.routes, frame_size=self.frame_size))
        object.__setattr__(self, "validation", check(
            loads=self.loads, loads_frac=self.loads_frac, runs=self.runs, duration=self.duration, search=self.search,
            pdr=self.pdr, methods=self.methods, steal_threshold=self.steal_threshold, max_repeats=self.max_repeats,
            repeats=self.repeats))


def measure(request: Request, *, announce: Callable[[str], None] | None = None, progress: Progress = silent):
    """Measure what ``request`` asks for: a sweep or a search of its engine in its scenario,
    into its dataset folder, on the testbed its settings make. ``announce`` is called with
    one-line messages (the ceiling, the plan and its duration), ``progress`` with a sweep's
    trials (:func:`routerlab.measuring.sweep.run`).

    Returns
    -------
    pathlib.Path or list of routerlab.measuring.search.SearchResult
        The dataset folder of a sweep; the results of a search.
    """
    from routerlab.measuring import search as search_mod
    from routerlab.measuring import sweep

    r = request
    announce = announce or (lambda msg: None)
    eng, sc = r.resolved
    ceiling_pps = r.ceiling_pps
    if (r.search is not None or r.loads_frac) and ceiling_pps is None:
        ceiling_pps = recorded_ceiling(r.out, r.experiment or f"{eng.name}-{sc.name}", r.settings)
        if ceiling_pps is not None:
            announce(f"resuming with the generator ceiling recorded in {r.out}: {ceiling_pps:.0f} pps")
    require_root(r.settings)
    if ceiling_pps is None and (r.search is not None or r.loads_frac):
        ceiling_pps = generator_ceiling(sc, announce, r.settings)
    if r.search is not None:
        return search_mod.run_search(eng, sc, r.out, kind=r.search, pdr=r.pdr, ceiling_pps=ceiling_pps,
                                     final_duration=r.duration, methods=r.methods, experiment=r.experiment,
                                     repeats=r.repeats or defaults.SEARCH_REPEATS, resume=True,
                                     validation=r.validation, settings=r.settings, announce=announce)
    # the engine by name: a request may carry the engine itself (a notebook, a test)
    plan = sweep.SweepPlan(eng.name, sc, sweep.parse_loads(r.loads, r.loads_frac, ceiling_pps), runs=r.runs,
                           duration=r.duration, experiment=r.experiment)
    announce(f"{plan.experiment}: {len(plan.loads)} loads x {plan.runs} runs x {plan.duration:g} s "
             f"(about {plan.seconds / 60:.1f} min)")
    return sweep.run(plan, Path(r.out), engine=eng, ceiling_pps=ceiling_pps, progress=progress,
                     validation=r.validation, settings=r.settings)
