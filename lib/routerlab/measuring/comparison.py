"""The 100GE router comparison measured: which engine can play which published scenario
here (:func:`cell_plan`), what the machine says of GRE (:func:`gre_here`), and every cell
measured into one folder (:func:`campaign`). The tables, published and ours, are
:mod:`routerlab.analysis.comparison`'s.
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from routerlab.analysis.comparison import planned
from routerlab.errors import EngineNotFound, ParameterError, RouterlabError
from routerlab.progress import Progress, silent
from routerlab.analysis.scenarios import load as load_scenario


def cell_plan(engine_names, scenario_names, settings=None) -> pd.DataFrame:
    """Which (engine, scenario) cells can run here (on the testbed of ``settings``,
    :class:`routerlab.testbed.settings.Settings`; None: the environment's), and why not where
    not: engine, scenario, runnable, reason."""
    from routerlab.measuring import measurement

    rows = []
    for sname in scenario_names:
        sc = load_scenario(sname)
        for e in engine_names:
            try:
                measurement.resolve(e, sc, settings=settings)
                rows.append({"engine": e, "scenario": sname, "runnable": True, "reason": ""})
            except (EngineNotFound, ParameterError) as err:
                rows.append({"engine": e, "scenario": sname, "runnable": False, "reason": str(err)})
    return pd.DataFrame(rows)


def gre_here() -> str:
    """Which engines fill the GRE table and why the others do not, with what the kernel of
    the machine running this says of its own GRE module (:func:`routerlab.measuring.doctor.kernel_module`):
    a fact of each machine, so asked on each, never written down once for all readers."""
    from routerlab.engines import registry
    from routerlab.measuring.doctor import kernel_module

    building = [n for n, cls in registry.classes().items() if "gre" in cls.features]
    others = [n for n, cls in registry.classes().items() if "gre" not in cls.features and n != "calibration"]
    state = {"loaded": "has its GRE module (ip_gre) loaded", "built in": "has GRE (ip_gre) built in",
             "loadable": "can load its GRE module (ip_gre)", "absent": "has no GRE module (ip_gre)",
             "unknown": "has no GRE module (ip_gre) loaded, and no module list to say whether it could load one"}
    here = state[kernel_module("ip_gre")]
    return (f"The GRE table is filled by the engines that build the GRE header themselves ({', '.join(building)}); "
            f"{' and '.join([', '.join(others[:-1]), others[-1]] if len(others) > 1 else others)} do not offer GRE "
            f"in routerlab, whatever the kernel. "
            f"This machine's kernel ({os.uname().release}) {here}.")


def campaign(out, engine_names=None, scenario_names=None, *, fractions=None, runs: int | None = None,
             duration: float | None = None, ceiling_pps: float | None = None, announce=None, settings=None,
             progress: Progress = silent) -> Path:
    """Measure every runnable cell into the dataset ``out`` (resuming what is there) and
    write ``cells.csv`` with the reason for every cell not run, on the testbed of
    ``settings`` (:class:`routerlab.testbed.settings.Settings`; None: the environment's).
    Needs root.

    ``engine_names``, ``scenario_names`` (presets), ``fractions`` (of the generator's
    ceiling), ``runs`` (trials per cell and load) and ``duration`` (seconds per trial)
    default to the comparison's campaign file (:func:`planned`). ``announce`` gets one-line
    messages, ``progress`` each cell's trials (:func:`routerlab.measuring.sweep.run`)."""
    from routerlab.measuring import measurement
    from routerlab.testbed.settings import Settings

    plan = planned() if any(x is None for x in (engine_names, scenario_names, fractions, runs, duration)) else {}
    engine_names = tuple(plan["engines"]) if engine_names is None else engine_names
    scenario_names = tuple(plan["scenarios"].values()) if scenario_names is None else scenario_names
    fractions = plan["loads_frac"] if fractions is None else fractions
    runs = plan["runs"] if runs is None else runs
    duration = plan["duration"] if duration is None else duration
    announce = announce or (lambda msg: None)
    # a bad fraction, run count or duration is refused now, not by every cell after the ceiling
    measurement.check(loads_frac=",".join(map(str, fractions)), runs=runs, duration=duration)
    settings = settings or Settings()
    # one ceiling (64-byte frames) for every cell: the tables' columns are its fractions;
    # a resumed campaign keeps the one it started with, so its loads stay the same
    ceiling_pps = ceiling_pps or measurement.recorded_ceiling(out, settings=settings)
    if ceiling_pps is None:
        ceiling_pps = measurement.generator_ceiling(announce=announce, settings=settings)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    plan = cell_plan(engine_names, scenario_names, settings)
    plan.to_csv(out / "cells.csv", index=False)
    announce(f"{int(plan['runnable'].sum())} cells to measure, {int((~plan['runnable']).sum())} grey")
    for i, row in enumerate(plan.itertuples()):
        if not row.runnable:
            continue
        try:
            measurement.measure(measurement.Request(
                row.engine, row.scenario, out, loads_frac=",".join(map(str, fractions)), ceiling_pps=ceiling_pps,
                runs=runs, duration=duration, experiment=f"{row.engine}-{row.scenario}", settings=settings),
                announce=announce, progress=progress)
        except RouterlabError as e:
            # an engine that fails in one scenario (e.g. cannot load 900k routes in time) is a
            # grey cell with its reason, not the end of the campaign
            plan.loc[i, ["runnable", "reason"]] = [False, f"failed: {e}"]
            plan.to_csv(out / "cells.csv", index=False)
            announce(f"{row.engine}-{row.scenario}: failed: {e}")
    return out
