"""Shared by the tests that recompute every number a dataset README states from the
dataset's own files (and, for how a file was made, from the code that made it), so that
the text and the data cannot drift apart: tests/test_readme_<dataset>.py. Each test builds
the README's sentence from the data and looks for it in the README (whitespace folded), so
a changed number fails there until the text says it."""

import functools
import shutil
import subprocess

import numpy as np
import pandas as pd
import pytest

from routerlab import datasets, stats
from routerlab.validation import TrialValidation

D = datasets.datasets_dir()
KERNEL_PATHS = ["linux-single-flow", "nft-single-flow-fw0", "nft-single-flow-fw5", "nft-single-flow-fw50",
                "ebpf-single-flow", "ebpf-single-flow-fw50"]


def says(name: str, *phrases: str):
    """Each phrase is in ``datasets/<name>/README.md``, whitespace folded."""
    text = " ".join((D / name / "README.md").read_text().split())
    for phrase in phrases:
        assert " ".join(phrase.split()) in text, f"datasets/{name}/README.md does not say: {phrase}"


def trials(data) -> pd.DataFrame:
    """A dataset's trials (``data``: its name or folder, or a trials table as
    ``datasets.read`` gives it) with their loss, CPU and steal; generator-limited ones marked."""
    t = data if isinstance(data, pd.DataFrame) else datasets.read(D / data).trials
    return t.assign(loss=1 - t["rx"] / t["tx"], limited=t["generator_limited"].astype(bool),
                    rx_pps=t["rx"] / t["duration_s"])


def per_load(data) -> pd.DataFrame:
    """Per experiment and load, the trials the generator delivered (as the statistics
    count them): n, mean and worst loss, median throughput (pps), mean CPU, mean and
    largest steal. ``data``: as for :func:`trials`."""
    t = trials(data)
    return (t[~t["limited"]].groupby(["experiment", "offered_pps"])
            .agg(n=("loss", "size"), loss=("loss", "mean"), worst=("loss", "max"), rx_pps=("rx_pps", "median"),
                 cpu=("cpu_load", "mean"), steal=("steal", "mean"), steal_max=("steal", "max")))


def one(x) -> str:
    """A number (milliseconds, a percentage) with one decimal."""
    return f"{x:.1f}"


def notes(e) -> dict:
    """An experiment's ``notes`` (``key=value; ...``) as a dict of text values."""
    return dict(kv.split("=", 1) for kv in e["notes"].split("; "))


def attempts(folder, kind: str = "sweep") -> pd.DataFrame:
    """Every attempt of a folder's sweeps (``kind="sweep"``) or searches (``"search"``):
    the kept trials and those measured again (none where no superseded file exists)."""
    kept, again = {"sweep": ("trials.csv", "superseded_trials.csv"),
                   "search": ("search_trials.csv", "superseded_search_trials.csv")}[kind]
    t = pd.read_csv(folder / kept)
    return pd.concat([t, pd.read_csv(folder / again)]) if (folder / again).exists() else t


def search_trials(folder) -> pd.DataFrame:
    """A folder's search_trials.csv with each row's index within its experiment (the
    ``probe`` its superseded attempts point at), its loss ratio and the flags as booleans."""
    s = datasets.read_kind(folder, "search_trials.csv")
    return s.assign(probe=s.groupby("experiment").cumcount(), loss=s["lost"] / s["tx"],
                    **{c: s[c].astype(str).str.lower() == "true" for c in ("passed", "generator_limited", "disturbed")})


def statistics_paragraph_exists():
    """The main README has the section the dataset READMEs' terms cite (a checkout only)."""
    main = D.parent / "README.md"
    if main.exists():
        assert "\n## The statistics, in one paragraph\n" in main.read_text()


def span(values, fmt) -> str:
    """``lo-hi`` of the values, each written with ``fmt``; one value when they round alike."""
    lo, hi = fmt(min(values)), fmt(max(values))
    return lo if lo == hi else f"{lo}-{hi}"


def pct(digits=0):
    return lambda x: f"{100 * x:.{digits}f}"


def when_range(stamps) -> str:
    t = pd.to_datetime(pd.Series(stamps))
    return f"{t.min():%H:%M}-{t.max():%H:%M}"


def sig2(ratio) -> str:
    """A loss ratio as a percentage with two significant digits, positional ("0.0076",
    "0.12", "7.2", "18"); "0" for none."""
    v = 100 * float(ratio)
    if v == 0:
        return "0"
    return f"{v:.{max(0, 1 - int(np.floor(np.log10(abs(v)))))}f}"


def pps(x) -> str:
    return f"{x:,.0f}"


def committed(path: str, commit: str) -> str:
    """A file as it was at ``commit`` (git history: a checkout only)."""
    root = D.parent
    if shutil.which("git") is None or not (root / ".git").exists():
        pytest.skip("git history is not here (not a git checkout, or no git)")
    if subprocess.run(["git", "-C", str(root), "cat-file", "-e", f"{commit}^{{commit}}"]).returncode:
        pytest.skip(f"commit {commit[:7]} is not in this clone (a shallow clone)")
    return subprocess.run(["git", "-C", str(root), "show", f"{commit}:{path}"],
                          capture_output=True, text=True, check=True).stdout


VETH = "testbed-veth"
BMV2 = "testbed-bmv2"
#: The commit testbed-veth's measurement alone on the machine (2026-11-25, from 18:47 UTC)
#: ran with (``scripts/remeasure-testbed.sh OUT testbed-veth``).
VETH_CODE_ALONE = "c509560faebc96f3d2a21e22967c252ae75eafae"
#: The commit the measurement of testbed-click, click-course, testbed-bmv2 and comparison
#: alone on the machine (2026-11-25, from 21:39 UTC) ran with
#: (``scripts/remeasure-testbed.sh OUT testbed-click click-course testbed-bmv2 comparison``).
CODE_ALONE = "0d06652e570507452cd15ccc150d695bad7d7ac8"
#: The commit that holds the four datasets that measurement replaced: the morning's run
#: (2026-11-25 09:03-10:31 UTC, code 9f2de31, beside other work on the router's CPU). The
#: same commit as CODE_ALONE: the run started from it, before its files were copied in.
MORNING = "0d06652e570507452cd15ccc150d695bad7d7ac8"
#: The commit that holds the testbed-veth that measurement replaced: the run of 09:19 UTC
#: with code 9f2de31, beside other work on the router's CPU.
VETH_SHARED = "d05b257cc5648cf25625587407f96181c3e3e3bd"
#: The commit that holds the testbed datasets that re-measurement replaced (measured on
#: 2026-11-23 from 22:48 UTC with code cf089af): what a README compares with.
PREVIOUS = "556b704a510e75eaea75c3d87d1e9ecad4149c65"
#: The commit that holds this dataset's previous sweeps (2026-11-23, 20:53 UTC), which the README compares with.
VETH_BEFORE = "c31633184400de83e91442d3e6362e7390f7332f"
#: The commit the re-measurement with idle CPUs polling ran with (2026-11-26 10:20-11:02 UTC,
#: ``scripts/remeasure-testbed.sh OUT``, the machine to itself): testbed-click, click-course,
#: testbed-bmv2 and testbed-veth, in that order, its sweeps given the ceiling it measured at its start.
#: The comparison it went on to was stopped before its first trial (SIGINT, 11:02 UTC).
POLL_CODE = "e167e53752bfd463c678314a37802015f7b37770"
#: The commit the comparison's re-measurement with idle CPUs polling ran with (2026-11-26
#: from 12:24 UTC, ``scripts/remeasure-testbed.sh OUT comparison``, the machine to itself).
POLL_COMPARISON_CODE = "28d8e4b1209a89b0a9110be219ad421421a9670b"
#: The commit that holds the five datasets the polling runs replaced, measured with idle CPUs
#: halting (testbed-veth with VETH_CODE_ALONE, the other four with CODE_ALONE).
HALTING = "28d8e4b1209a89b0a9110be219ad421421a9670b"
#: The commit the five datasets' measurement with the generator's lags held against any loss
#: they can account for ran with (2026-11-26 from 14:51 UTC, ``scripts/remeasure-testbed.sh
#: OUT`` from a fresh clone, the machine to itself, idle CPUs polling): testbed-click,
#: click-course, testbed-bmv2, testbed-veth and comparison, in that order, in one run with one ceiling.
LAG_CODE = "c3e008ed75f419ded385a24dfd4b0dcbb36a3a01"
#: The commit that holds the five datasets that measurement replaced: the polling runs
#: (four at POLL_CODE, the comparison at POLL_COMPARISON_CODE).
POLLING = "29af4e87dabe7ae970612f3d447945bbf8f68946"


def assessed(folder):
    """A sweep folder's trials, per-sweep assessments (by experiment) and its one ceiling."""
    t = datasets.read(folder).trials
    a = {x.experiment: x for x in stats.assess(t)}
    ceiling = datasets.read_experiments(folder)["generator_ceiling_pps"].unique()
    assert len(ceiling) == 1
    return t, a, float(ceiling[0])


@functools.lru_cache(maxsize=None)
def veth():
    """The dataset's trials, drops, per-sweep assessments (by experiment) and ceiling."""
    t, a, ceiling = assessed(D / VETH)
    return t, datasets.read_drops([D / VETH]), a, ceiling


def loss_rows(name: str) -> pd.DataFrame:
    """The counters of ``datasets/<name>/drops.csv`` that count lost packets (not those
    counted as design or context)."""
    d = datasets.read_drops([D / name])
    return d[d["counted_as"] == "loss"]


def check_superseded_searches(kept: pd.DataFrame, superseded: pd.DataFrame):
    """A search's attempts measured again point at their kept row: ``probe`` is the row in
    ``search_trials.csv`` within its experiment (``kept`` carries it as a column), whose
    ``attempt`` counts the ones before it, at the same load."""
    k = kept.set_index(["experiment", "probe"])
    made = superseded.groupby(["experiment", "probe"]).size()
    assert (k.loc[made.index, "attempt"] == made + 1).all()
    assert (k.drop(made.index)["attempt"] == 1).all()
    o = superseded.set_index(["experiment", "probe"])
    assert (o["offered_pps"] - k.loc[o.index, "load"]).abs().max() < 1e-6


def previous_files(name: str, folder, files=("trials.csv", "experiments.csv", "search_results.csv",
                                              "search_trials.csv", "drops.csv"), commit: str = PREVIOUS):
    """The files of ``datasets/<name>`` that a re-measurement replaced (as they were at
    ``commit``, by default ``PREVIOUS``), written into ``folder`` so the readers of
    ``routerlab.datasets`` take them; returns ``folder``."""
    for f in files:
        (folder / f).write_text(committed(f"datasets/{name}/{f}", commit))
    return folder


def veth_as_shared(folder):
    """testbed-veth as the run of 2026-11-25 09:19 UTC, beside other work, left it (commit
    ``VETH_SHARED``), every file of it written into ``folder``; returns ``folder``."""
    return previous_files(VETH, folder, ("trials.csv", "experiments.csv", "search_results.csv", "search_trials.csv",
                                         "drops.csv", "superseded_trials.csv"), commit=VETH_SHARED)


def why(rows: pd.DataFrame) -> pd.Series:
    """The validation's reasons for each row (a trial or an attempt), ``; ``-separated."""
    return pd.Series([TrialValidation().why_disturbed(r) for r in rows.to_dict("records")], index=rows.index,
                     dtype=object)


def superseded(name: str, file: str) -> pd.DataFrame:
    """``datasets/<name>``'s replaced attempts of the sweeps (``superseded_trials.csv``) or of
    the searches (``superseded_search_trials.csv``), each with the validation's reason. Read
    with pandas: the search attempts have the columns of trials.csv and ``probe``, not those
    of search_trials.csv that ``datasets.read_kind`` expects."""
    s = pd.read_csv(D / name / file)
    return s.assign(why=why(s))


def the_testbed_doc() -> str:
    """docs/testbed.md, whitespace folded; skips where docs/ is absent (an installed package)."""
    path = D.parent / "docs" / "testbed.md"
    if not path.exists():
        pytest.skip("docs/ is not installed with the package: only a checkout has it")
    return " ".join(path.read_text().split())


def lag_rule_changed() -> str:
    """Checks that the one commit to validation.py between POLL_CODE and LAG_CODE is
    LAG_CODE, and that it drops the queue's test for a generator's lag (a stop keeps it);
    returns the sentence a README says it with (a checkout only)."""
    committed("lib/routerlab/validation.py", POLL_CODE)  # skips where the history is not here
    changed = subprocess.run(["git", "-C", str(D.parent), "log", "--format=%H", f"{POLL_CODE}..{LAG_CODE}", "--",
                              "lib/routerlab/validation.py"], capture_output=True, text=True, check=True).stdout.split()
    assert changed == [LAG_CODE]
    old, new = (committed("lib/routerlab/validation.py", c) for c in (POLL_CODE, LAG_CODE))
    assert "if accounts(lag, total):" in old and "(queue is None or longest > queue)" in old
    assert "if accounts(lag, total, queue=None):" in new
    return (f"The trial validation's rule differed: since {LAG_CODE[:7]} a lag of the generator is held against a "
            "loss it can account for however short the lag is next to the router's queue, where before it had to "
            "outlast the queue (How, below)")


def idle_code_revised() -> tuple[str, str, str]:
    """Checks that testbed.py was revised in fbb864d between POLL_CODE and LAG_CODE and
    holds the same 0-µs latency request at both; returns testbed.py at POLL_CODE and at
    LAG_CODE, and the clause a README says it with (a checkout only)."""
    tb_old, tb_new = (committed("lib/routerlab/testbed.py", c) for c in (POLL_CODE, LAG_CODE))
    revised = subprocess.run(["git", "-C", str(D.parent), "log", "--format=%h", "--abbrev=7",
                              f"{POLL_CODE}..{LAG_CODE}", "--", "lib/routerlab/testbed.py"],
                             capture_output=True, text=True, check=True).stdout.split()
    assert "fbb864d" in revised and "0 us held while up" in tb_old and "0 us held while up" in tb_new
    return tb_old, tb_new, ("and the testbed's code for idle CPUs, revised in between (fbb864d: the same 0-µs latency "
                            "request, now taken when a testbed is entered, and a record that names the cpuidle driver)")
