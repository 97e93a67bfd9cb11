"""``bench startup``: how long the command line takes to answer, as a user runs it, next
to floors measured in the same run (the issue's targets are printed with them)."""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from routerlab.analysis import pastrami
from routerlab.benchmarks.assess import best

#: Targets of the speed work, in seconds of wall time (medians).
HELP_TARGET_S = 0.3
ASSESS_TARGET_S = 1.5


def command() -> list[str]:
    """How a user starts routerlab here: the ``routerlab`` script of this Python's
    environment, else ``python -m routerlab.cli``."""
    script = Path(sys.executable).with_name("routerlab")
    if script.is_file():
        return [str(script)]
    found = shutil.which("routerlab")
    return [found] if found else [sys.executable, "-m", "routerlab.cli"]


def wall(argv: list[str], repeat: int) -> float:
    """Median wall time in seconds of ``repeat`` runs of ``argv`` (output discarded); a run
    that fails is an error, not a time."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        proc = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        times.append(time.perf_counter() - t0)
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(argv[:3])} ... exited {proc.returncode}: "
                               f"{proc.stderr.decode(errors='replace').strip()[-300:]}")
    return statistics.median(times)


def numpy_parse(files: list[Path]):
    """The floor of parsing: every number of the raw files into one numpy array, with no
    structure and no checks."""
    import numpy as np

    blank = str.maketrans("[],", "   ")
    return np.concatenate([np.array(f.read_text().translate(blank).split(), dtype=float) for f in files])


def warm_best(fn, repeat: int) -> float:
    """The shortest of ``repeat`` timed calls of ``fn`` (seconds), after one call that warms
    the caches (the parse is timed against a floor that reads the same files)."""
    fn()
    return best(fn, repeat)[0]


def run(data_dir=None, repeat: int = 5) -> dict:
    """Time ``routerlab --help`` and ``routerlab assess`` on the PASTRAMI set as
    subprocesses (median of ``repeat``), with their floors: a bare ``python -c "import
    numpy"`` start-up, and a plain numpy parse of the same files next to ours (in this
    process, best of ``repeat``). Every time is in seconds."""
    folder = pastrami.locate(data_dir)
    files = sorted(folder.rglob("*.txt"))
    rl = command()
    return {
        "command": " ".join(rl), "folder": str(folder), "files": len(files),
        "help_s": wall(rl + ["--help"], repeat),
        "assess_s": wall(rl + ["assess", str(folder)], repeat),
        "python_s": wall([sys.executable, "-c", "pass"], repeat),
        "numpy_s": wall([sys.executable, "-c", "import numpy"], repeat),
        "parse_s": warm_best(lambda: pastrami.read_files(files), repeat),
        "numpy_parse_s": warm_best(lambda: numpy_parse(files), repeat),
        "repeat": repeat,
    }


def report(r: dict) -> str:
    """The benchmark's report: each time next to its floor (as a ratio) and its target."""
    def verdict(t, target):
        return f"target <= {target:.1f} s: {'met' if t <= target else 'MISSED'}"

    rows = [
        ("command", f"{r['command']} (wall times: median of {r['repeat']} runs)"),
        ("python -c pass", f"{r['python_s']:.3f} s"),
        ('python -c "import numpy"', f"{r['numpy_s']:.3f} s   (floor of any start-up that needs numpy)"),
        ("routerlab --help", f"{r['help_s']:.3f} s   {r['help_s'] / r['numpy_s']:.2f}x the numpy floor; "
         + verdict(r["help_s"], HELP_TARGET_S)),
        ("routerlab assess", f"{r['assess_s']:.3f} s   {r['files']} files in {r['folder']}; "
         f"{r['assess_s'] / r['numpy_s']:.1f}x the numpy floor; " + verdict(r["assess_s"], ASSESS_TARGET_S)),
        ("parse, routerlab", f"{r['parse_s']:.3f} s   (checked, tidy table; best of {r['repeat']})"),
        ("parse, plain numpy", f"{r['numpy_parse_s']:.3f} s   (numbers only) -> ours is "
         f"{r['parse_s'] / r['numpy_parse_s']:.1f}x"),
    ]
    width = max(len(label) for label, _ in rows) + 2
    return "\n".join(label.ljust(width) + text for label, text in rows)
