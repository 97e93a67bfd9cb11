"""``bench assess``: how long parsing and assessing the whole published PASTRAMI set takes."""

from __future__ import annotations

import time

from routerlab.analysis import pastrami, stats

#: Analysis-time budget for assessing the whole published PASTRAMI set (issue target).
BUDGET_S = 1.0


def best(fn, repeat):
    """The shortest of ``repeat`` timed calls of ``fn`` (seconds) and its result."""
    fastest, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        fastest = min(fastest, time.perf_counter() - t0)
    return fastest, out


def run(data_dir=None, repeat: int = 5) -> dict:
    """Time parsing and assessing every PASTRAMI experiment, in both verdict modes.

    Analysis is timed two ways in the same run: one batched :func:`stats.assess` over
    the whole trial table, and one call per experiment (what a per-file loop costs).

    Returns
    -------
    dict
        ``experiments``, ``trials``, ``parse_s``, ``analysis_s`` (batched, strict),
        ``analysis_notebook_s``, ``per_experiment_s`` (seconds, the best of ``repeat``),
        ``good_strict``, ``good_notebook``.
    """
    folder = pastrami.locate(data_dir)
    parse_s, trials = best(lambda: pastrami.read_dir(folder), 1)
    analysis_s, res = best(lambda: stats.assess(trials, mode="strict"), repeat)
    nb_s, res_nb = best(lambda: stats.assess(trials, mode="notebook"), repeat)
    groups = [g for _, g in trials.groupby("experiment", sort=False)]
    per_s, _ = best(lambda: [stats.assess(g) for g in groups], max(1, repeat // 2))
    return {
        "folder": str(folder), "experiments": len(res), "trials": len(trials),
        "parse_s": parse_s, "analysis_s": analysis_s, "analysis_notebook_s": nb_s,
        "per_experiment_s": per_s,
        "good_strict": sum(a.verdict.good for a in res),
        "good_notebook": sum(a.verdict.good for a in res_nb),
    }


def report(r: dict) -> str:
    """The benchmark's report, one figure a line."""
    return "\n".join([
        f"PASTRAMI data          {r['folder']}",
        f"experiments, trials    {r['experiments']}, {r['trials']}",
        f"parse (read raw files) {r['parse_s']:.3f} s",
        f"analysis, batched      {r['analysis_s']:.3f} s (strict), {r['analysis_notebook_s']:.3f} s (notebook)",
        f"analysis, per file     {r['per_experiment_s']:.3f} s  "
        f"(batched is {r['per_experiment_s'] / r['analysis_s']:.1f}x faster)",
        f"budget                 {BUDGET_S:.1f} s -> analysis uses {r['analysis_s'] / BUDGET_S:.1%} of it",
        f"GOOD verdicts          {r['good_strict']} strict, {r['good_notebook']} notebook "
        f"(of {r['experiments']})",
    ])
