"""``bench report``: how long ``routerlab report --check`` takes for every committed
dataset, as a user runs it, next to a floor measured in the same run (reading the same
files with pandas, the least a report can do) and its target."""

from __future__ import annotations

import sys
import time

#: Target of ``routerlab report --check`` over every committed dataset, seconds of wall
#: time on 2 cores.
CHECK_TARGET_S = 30.0


def run(repeat: int = 3) -> dict:
    """Time ``routerlab report --check`` (a subprocess, median of ``repeat``) and its floor:
    every CSV file of the same datasets read with pandas in a fresh process (median of
    ``repeat``). Times in seconds."""
    from routerlab.analysis import datasets
    from routerlab.benchmarks.startup import command, wall

    folders = datasets.committed()
    files = sorted(str(p) for f in folders for p in f.glob("*.csv"))
    floor = ("import sys, pandas\nfor f in sys.argv[1:]:\n    pandas.read_csv(f)\n")
    t0 = time.perf_counter()
    check_s = wall(command() + ["report", "--check"], repeat)
    return {"datasets": len(folders), "files": len(files), "check_s": check_s,
            "floor_s": wall([sys.executable, "-c", floor, *files], repeat), "repeat": repeat,
            "elapsed_s": time.perf_counter() - t0}


def report(r: dict) -> str:
    """The time next to its floor, as a ratio, and next to its target."""
    met = "met" if r["check_s"] <= CHECK_TARGET_S else "MISSED"
    return "\n".join([
        f"routerlab report --check   {r['check_s']:.2f} s  ({r['datasets']} datasets; median of {r['repeat']} runs)",
        f"floor: read their {r['files']} CSV files with pandas   {r['floor_s']:.2f} s  -> --check is "
        f"{r['check_s'] / r['floor_s']:.1f}x the floor",
        f"target <= {CHECK_TARGET_S:.0f} s: {met}"])
