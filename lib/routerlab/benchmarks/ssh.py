"""``bench ssh``: the SSH testbed next to the namespace testbed, in one run: the same
search's answer on both against the truth of a router of known capacity (the calibration
router), and what a trial costs in wall time on each, next to its floor (the trial's own
duration)."""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from routerlab.measuring import search, sweep
from routerlab.remote import sshtestbed
from routerlab.analysis import stats
from routerlab.testbed import namespaces
from routerlab.testbed.settings import Settings
from routerlab.engines.calibration import Calibration
from routerlab.analysis.scenarios import Scenario

TESTBEDS = ("namespaces", "ssh")


def _on(where: str, path, fn):
    """``fn(settings)`` with the testbed settings of ``where``: the SSH testbed of the file
    ``path``, or the namespace testbed sending with rlgen as the SSH testbed does."""
    if where == "ssh":
        with sshtestbed.using(path) as settings:
            return fn(settings)
    return fn(Settings(generator="rlgen"))


def run(testbed_file, out, *, capacity_pps: int = 30000, load_pps: float = 20000, trials: int = 20,
        duration: float = 0.5, final_duration: float = 1.0) -> dict:
    """On the namespace testbed and on ``testbed_file``'s hosts, both with rlgen: a sweep of
    ``trials`` trials of ``duration`` seconds at ``load_pps`` on the linux engine (wall
    seconds per attempt: the sweep's time less a testbed's bring-up and removal, the
    median of 3, divided by the trials' attempts, those trial validation measured again
    included), and a PDR search of the calibration
    router of ``capacity_pps`` (its answer, pps, and its truth). ``out`` gets both
    testbeds' datasets."""
    out = Path(out)
    res = {"capacity_pps": capacity_pps, "load_pps": load_pps, "trials": trials, "duration_s": duration,
           "final_duration_s": final_duration}
    for where in TESTBEDS:
        folder = out / where
        plan = sweep.SweepPlan("linux", Scenario(name="single-flow"), [load_pps], runs=trials, duration=duration,
                               experiment=f"overhead-{where}")

        def measure_sweep(settings):
            t0 = time.perf_counter()
            sweep.run(plan, folder, ceiling_pps=load_pps * 5, settings=settings)
            return time.perf_counter() - t0

        def up_and_down(settings):
            t0 = time.perf_counter()
            with namespaces.make(settings):
                pass
            return time.perf_counter() - t0

        total = _on(where, testbed_file, measure_sweep)
        setup = statistics.median(_on(where, testbed_file, up_and_down) for _ in range(3))
        import pandas as pd

        t = pd.read_csv(folder / "trials.csv")
        t = t[t["experiment"] == plan.experiment]
        # a disturbed trial is measured again (trial validation): each attempt is a trial's work
        attempts = len(t) + _superseded(folder, plan.experiment)
        eng = Calibration(capacity_pps=capacity_pps)
        (found,) = _on(where, testbed_file, lambda settings: search.run_search(
            eng, Scenario(name="single-flow"), folder, kind="pdr", ceiling_pps=capacity_pps * 4,
            final_duration=final_duration, final_trials=2, experiment=f"calibration-{where}", settings=settings))
        res[where] = {"sweep_s": total, "setup_s": setup, "attempts": attempts,
                      "per_trial_s": max(total - setup, 0) / attempts,
                      "lossless": bool((t["rx"] == t["tx"]).all()),
                      "pdr_pps": found.lower, "truth_pps": eng.true_pdr(final_duration, stats.PDR_FRACTION)}
    return res


def _superseded(folder: Path, experiment: str) -> int:
    import pandas as pd

    path = folder / "superseded_trials.csv"
    if not path.is_file():
        return 0
    return int((pd.read_csv(path)["experiment"] == experiment).sum())


def report(res: dict) -> str:
    ns, ssh = res["namespaces"], res["ssh"]
    d = res["duration_s"]
    lines = [f"{res['trials']} trials of {d:g} s at {res['load_pps']:.0f} pps (linux), then a PDR@0.5% search of "
             f"the calibration router of {res['capacity_pps']} pps, on each testbed (rlgen):",
             f"{'':12}{'set-up s':>10}{'attempts':>10}{'s/attempt':>11}{'floor':>8}{'ratio':>8}{'lossless':>10}"
             f"{'PDR pps':>10}{'truth':>9}{'off':>8}"]
    for where in TESTBEDS:
        r = res[where]
        lines.append(f"{where:12}{r['setup_s']:>10.2f}{r['attempts']:>10}{r['per_trial_s']:>11.3f}{d:>8.3f}"
                     f"{r['per_trial_s'] / d:>8.2f}"
                     f"{str(r['lossless']):>10}{r['pdr_pps']:>10.0f}{r['truth_pps']:>9.0f}"
                     f"{(r['pdr_pps'] - r['truth_pps']) / r['truth_pps']:>+8.1%}")
    lines.append(f"SSH's overhead per attempt: {ssh['per_trial_s'] - ns['per_trial_s']:+.3f} s "
                 f"({ssh['per_trial_s'] / ns['per_trial_s']:.2f}x the namespace testbed's time per attempt; "
                 f"{res['trials']} trials took {ns['attempts']} and {ssh['attempts']} attempts); "
                 f"the two PDRs differ by {(ssh['pdr_pps'] - ns['pdr_pps']) / ns['pdr_pps']:+.1%}")
    return "\n".join(lines)
