"""One dataset format: a tidy trial table plus one metadata record per experiment.

A *dataset* is a folder with

- ``trials.csv`` (or ``trials.parquet``): one row per trial, long form — see
  :data:`TRIAL_COLUMNS`; testbed facts that vary by experiment may also stand here as
  columns, never in file names;
- ``experiments.csv``: one row per experiment — where, when and how it was measured
  (:data:`EXPERIMENT_COLUMNS`). Every experiment routerlab runs (sweeps, the comparison,
  fast reroute, the microbenchmarks) writes this same record, with
  :func:`record_environment`, and :func:`read_experiments` reads it;
- ``README.md``: the same in words, for people.

A single trials file (CSV or Parquet) is also accepted wherever a dataset is read.
The format is documented in ``datasets/README.md``.
"""

from __future__ import annotations

import contextlib
import contextvars
import csv
import logging
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from routerlab.errors import DataFormatError
from routerlab.version import code_version, project_dir

#: Trial columns: name -> (required, meaning with unit).
TRIAL_COLUMNS = {
    "experiment": (True, "experiment id; one sweep of offered loads"),
    "offered_pps": (True, "offered load of the trial, packets per second"),
    "trial": (True, "trial index within its load, 0-based"),
    "tx": (True, "packets offered: put on the wire or refused at the router's input"),
    "rx": (True, "packets that reached the sink"),
    "duration_s": (False, "trial duration, seconds"),
    "engine": (False, "router engine: linux, nft, ebpf, click, fastclick, bmv2, ..."),
    "scenario": (False, "scenario preset or description"),
    "cpu_load": (False, "CPU busy fraction of the device under test, ratio in [0, 1]"),
    "steal": (False, "CPU steal fraction during the trial, ratio in [0, 1]"),
    "cpu_stop_ms": (False, "longest stop of the router's CPU during the trial (a wake-up of a "
                           "real-time probe, above every ordinary task, that late), milliseconds"),
    "cpu_stops": (False, "how many of the probe's wake-ups were more than 5 ms late during the "
                         "trial: stops a router's own work does not explain"),
    "cpu_stopped_ms": (False, "their lateness added up, milliseconds: each stop reads up to one "
                              "probe period short"),
    "gen_late_ms": (False, "how far behind its schedule the generator fell at worst, "
                           "milliseconds: it then catches up, rlgen at 1.05 times the rate (before "
                           "2026-12-07 at once, then at 1.5 times), the XDP generator at 1.5 times"),
    "gen_lagged_ms": (False, "how far behind its schedule the generator fell at worst, added up "
                             "over every time it fell more than 5 ms behind: milliseconds of load "
                             "made up late (rlgen's, since 2026-12-07, count a later hold within "
                             "one such time too)"),
    "queue_ms": (False, "how long the router's queue lasts at the offered load (its packets / "
                        "offered_pps), milliseconds: a longer stop can lose packets"),
    "router_ns_per_packet": (False, "the router CPU's own work during the trial (user, system, irq and "
                                    "softirq time, steal left out) per packet that reached the sink, "
                                    "nanoseconds: time, not cycles (no hardware counters), from /proc/stat, "
                                    "sampled at the kernel's tick; empty when none reached it"),
    "napi_ns_per_packet": (False, "how long the threaded NAPI of the router's input veth ran during the "
                                  "trial (the scheduler's own clock, /proc/<pid>/schedstat: exact) per packet "
                                  "that reached the sink, nanoseconds: all the work the kernel's paths (linux, "
                                  "nft, ebpf) do for a packet; with rlgen, the XDP router's alone; empty for "
                                  "the other engines with rlgen and beyond one machine"),
    "engine_ns_per_packet": (False, "how long a user-space engine's own threads ran from just before the "
                                    "generator started to just after it ended (the scheduler's clock, "
                                    "/proc/<pid>/task/<tid>/schedstat) per packet that reached the sink, "
                                    "nanoseconds; empty for the kernel's paths and beyond one machine"),
    "engine_wait_ms": (False, "how long a user-space engine's own threads waited over the same span, ready to "
                              "run, while something else had their CPU (the same clock), milliseconds added up "
                              "over its threads; empty for the kernel's paths and beyond one machine"),
    "router_steal": (False, "steal fraction of the router's CPU alone during the trial, ratio in [0, 1]"),
    "cpu_speed": (False, "how fast the router's CPU ran just before the trial's traffic: a fixed loop "
                         "timed on it at real-time priority, iterations per microsecond (a dependent "
                         "64-bit multiply and add each); it drops when the host slows the virtual CPU"),
    "memory_ns": (False, "how long one load took, just before the trial's traffic, of a walk along a random "
                         "cycle through 8 MiB on the router's CPU (each load depending on the last), "
                         "nanoseconds: it grows when another guest takes the cache or memory the host shares"),
    "cpu_distance_ns": (False, "how long one cache line took, just before the trial's traffic, to go from the "
                               "router's CPU to the generator's and back (two processes pinned there passing it), "
                               "nanoseconds: how near the host ran the two virtual CPUs (one core, one chiplet, two); "
                               "empty where the generator is not on the router's machine"),
    "gen_cpu_load": (False, "busy fraction of the generator's CPU (the XDP sink's too, which shares it), "
                            "ratio in [0, 1]; empty where not on the router's machine"),
    "sink_cpu_load": (False, "busy fraction of the sink's receive CPU where it has one of its own, "
                             "ratio in [0, 1]; empty where it shares the generator's or the router's"),
    "generator_limited": (False, "the generator could not keep the requested rate"),
    "sent_pps": (False, "rate the generator achieved, packets per second"),
    "started_at": (False, "trial start, ISO 8601 UTC"),
    "attempt": (False, "attempt that was kept, 1-based: "
                       "a disturbed trial is measured again "
                       "(the others are in superseded_trials.csv)"),
    "disturbed": (False, "the kept attempt was disturbed too, after every repeat allowed: steal "
                         "above the threshold, or a loss that stops of the router's CPU or lags of "
                         "the generator can account for, the longest longer than queue_ms (and than "
                         "the stop floor, or for a lag the probe's period) (see routerlab.measuring.validation)"),
    "lost": (False, "packets lost, tx - rx"),
    "lost_attributed": (False, "lost packets a drop counter accounts for (drops.csv has which)"),
    "lost_unexplained": (False, "lost - lost_attributed: what no counter saw; negative when the "
                                "counters took more than was lost"),
    "trace_missed": (False, "the sink's received packets "
                            "the kernel's drop-reason trace did not see "
                            "(its blind spot in this trial)"),
    "drops": (False, "the loss counters that moved, 'place:REASON=packets' separated by ';'"),
}

#: Experiment metadata columns (experiments.csv), the one environment record of every
#: experiment: name -> meaning. Every column is written, empty where it does not apply.
EXPERIMENT_COLUMNS = {
    "experiment": "experiment id (matches trials)",
    "source": "who measured it: 'routerlab testbed' or a citation",
    "where": "machine or testbed (hostname / kind, virtualisation)",
    "when": "date of the measurement, ISO 8601",
    "kernel": "Linux kernel release of the device under test",
    "cpu": "CPU model and count",
    "pinning": "how CPUs were assigned to generator, router, sink, and how idle CPUs waited "
               "(poll: CPU latency request held at 0 us; os: the kernel's idle states)",
    "engine": "router engine; several separated by '; '",
    "engine_version": "engine version; several in the order of engine, separated by '; '",
    "generator": "traffic generator and version",
    "generator_ceiling_pps": "generator's own ceiling measured into the sink, pps",
    "frame_size": "frame size on the wire, bytes",
    "scenario": "scenario preset and its parameters",
    "notes": "anything else a reader needs",
    "versions": "routerlab's own version (and commit, from a checkout), then other software that took part, "
                "'name: version' separated by '; '",
    "command": "the command line that ran the experiment",
    "campaign": "the campaign file that ran it, 'campaign.yaml sha256:<hex>' (the file copied beside it); "
                "empty for a command run alone",
}
#: Columns added to experiments.csv after some datasets were written: a file without one
#: reads as if it were empty.
LATER_EXPERIMENT_COLUMNS = ("campaign",)

REQUIRED = [c for c, (req, _) in TRIAL_COLUMNS.items() if req]


@dataclass
class Dataset:
    """Trials and experiment metadata of one dataset.

    Attributes
    ----------
    trials : pandas.DataFrame
        One row per trial (:data:`TRIAL_COLUMNS`, plus any set-up columns).
    experiments : pandas.DataFrame
        One row per experiment (:data:`EXPERIMENT_COLUMNS`); may be empty.
    path : pathlib.Path or None
        Where it was read from.
    """

    trials: pd.DataFrame
    experiments: pd.DataFrame
    path: Path | None = None

    def joined(self) -> pd.DataFrame:
        """Trials with their experiment's metadata as extra columns."""
        if self.experiments.empty:
            return self.trials
        extra = [c for c in self.experiments.columns if c == "experiment" or c not in self.trials]
        return self.trials.merge(self.experiments[extra], on="experiment", how="left")


def validate_trials(df: pd.DataFrame, source: str = "<table>", first_line: int = 2) -> pd.DataFrame:
    """Check a trial table and return it with canonical dtypes.

    Parameters
    ----------
    df : pandas.DataFrame
        The table.
    source : str
        File name used in error messages.
    first_line : int
        File line of the first row (2 for a CSV with a header), so errors name the line.

    Raises
    ------
    DataFormatError
        Naming the file, and the line of the first bad row.
    """
    missing = [c for c in REQUIRED if c not in df.columns]
    if missing:
        raise DataFormatError(source, 1, f"missing required column(s): {', '.join(missing)}")
    df = df.copy()
    lines = df["line"].to_numpy() if "line" in df.columns else np.arange(len(df)) + first_line
    for col in ("offered_pps", "tx", "rx", "trial"):
        num = pd.to_numeric(df[col], errors="coerce")
        bad = num.isna().to_numpy()
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise DataFormatError(source, int(lines[i]), f"{col} is not a number: {df[col].iloc[i]!r}")
        df[col] = num
    for col, cond, what in (("offered_pps", df["offered_pps"] > 0, "offered load must be > 0 pps"),
                            ("tx", df["tx"] > 0, "offered packets (tx) must be > 0"),
                            ("rx", df["rx"] >= 0, "received packets (rx) must be >= 0")):
        bad = ~cond.to_numpy()
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise DataFormatError(source, int(lines[i]), f"{what}, got {df[col].iloc[i]:g}")
    if df["experiment"].isna().any():
        i = int(np.flatnonzero(df["experiment"].isna().to_numpy())[0])
        raise DataFormatError(source, int(lines[i]), "experiment id is empty")
    df["experiment"] = df["experiment"].astype(str)
    df["tx"] = df["tx"].astype("int64")
    df["rx"] = df["rx"].astype("int64")
    df["trial"] = df["trial"].astype("int64")
    return df


def _read_table(path: Path) -> pd.DataFrame:
    if path.suffix == ".parquet":
        return pd.read_parquet(path)
    try:
        return pd.read_csv(path, comment=None)
    except (pd.errors.ParserError, UnicodeDecodeError) as e:
        raise DataFormatError(path, None, f"not a readable CSV ({e})") from None
    except pd.errors.EmptyDataError:
        raise DataFormatError(path, None, "empty file") from None


def read(path) -> Dataset:
    """Read a dataset folder, or a single trials file (``.csv`` / ``.parquet``).

    Raises
    ------
    DataFormatError
        Naming the file and line of the first malformed row.
    """
    path = Path(path)
    if path.is_dir():
        trials_file = next((path / f for f in ("trials.parquet", "trials.csv") if (path / f).is_file()), None)
        if trials_file is None:
            raise DataFormatError(path, None, "no trials.csv or trials.parquet in this folder")
        meta_file = path / "experiments.csv"
    elif path.is_file():
        trials_file, meta_file = path, path.with_name("experiments.csv")
        if path.suffix not in (".csv", ".parquet"):
            raise DataFormatError(path, None, "expected a .csv or .parquet trials file")
    else:
        raise DataFormatError(path, None, "no such file or folder")
    trials = validate_trials(_read_table(trials_file), str(trials_file))
    experiments = read_experiments(meta_file) if meta_file.is_file() else pd.DataFrame({"experiment": []})
    return Dataset(trials, experiments, path)


#: Metadata columns that hold numbers; every other metadata column is text (kernel "6.10"
#: must not become the float 6.1).
NUMERIC_EXPERIMENT_COLUMNS = ("generator_ceiling_pps", "frame_size")


def read_many(paths) -> Dataset:
    """Several datasets as one: their trials and experiments stacked.

    Experiment ids must not repeat across the datasets (each names one sweep).
    """
    parts = [read(p) for p in paths]
    seen: dict[str, Path | None] = {}
    for ds in parts:
        for e in ds.trials["experiment"].unique():
            if e in seen:
                raise DataFormatError(ds.path, None, f"experiment {e!r} is also in {seen[e]}")
            seen[e] = ds.path
    return Dataset(pd.concat([d.trials for d in parts], ignore_index=True),
                   pd.concat([d.experiments for d in parts], ignore_index=True), None)


def read_experiments(path) -> pd.DataFrame:
    """Read the environment records of ``experiments.csv`` (the file, or the folder that
    holds it), one row per experiment: text columns stay text, numeric ones become numbers."""
    df = _read_records(path)
    for c in LATER_EXPERIMENT_COLUMNS:
        if c not in df:
            df[c] = ""
    for c in NUMERIC_EXPERIMENT_COLUMNS:
        if c in df:
            df[c] = pd.to_numeric(df[c].replace("", None), errors="coerce")
    return df


def _read_records(path) -> pd.DataFrame:
    """``experiments.csv`` exactly as written: every column text."""
    path = Path(path)
    if path.is_dir():
        path = path / "experiments.csv"
    try:
        return pd.read_csv(path, dtype=str, keep_default_na=False)
    except FileNotFoundError:
        raise DataFormatError(path, None, "no such file") from None
    except (pd.errors.ParserError, UnicodeDecodeError, pd.errors.EmptyDataError) as e:
        raise DataFormatError(path, None, f"not a readable CSV ({e})") from None


#: The campaign running in this context, for the ``campaign`` column of every record
#: written meanwhile: set by :func:`running_campaign` around the steps of ``routerlab
#: campaign run``, and read by :func:`record_environment` alone. A context variable, not a
#: parameter: every experiment (sweeps, searches, the comparison, the microbenchmarks,
#: fast reroute) writes its record deep inside its own functions, which need not know of
#: campaigns; the one writer asks.
_CAMPAIGN: contextvars.ContextVar[str] = contextvars.ContextVar("routerlab_campaign", default="")


@contextlib.contextmanager
def running_campaign(label: str):
    """Within the block, every environment record names the campaign ``label``
    (``"campaign.yaml sha256:<hex>"``) in its ``campaign`` column, unless given one."""
    token = _CAMPAIGN.set(label)
    try:
        yield
    finally:
        _CAMPAIGN.reset(token)


def generator_kind(recorded) -> str:
    """Which generator an environment record's ``generator`` names: "xdp", "rlgen", or ""
    when it names neither (a citation's, iperf)."""
    text = str(recorded or "")
    return "xdp" if text.startswith("xdp") else "rlgen" if text.startswith("rlgen") else ""


def record_environment(folder, experiment: str, source: str, *, setting: str = "", when: str | None = None,
                       **facts) -> dict:
    """Write the environment record of ``experiment`` to ``folder/experiments.csv``
    (replacing an earlier record of the same experiment; the others stay as they were
    written) and return it. Every experiment routerlab runs records itself here.

    Parameters
    ----------
    source : str
        Who measured it and how (``"routerlab testbed"``, ...).
    setting : str
        What stands between the parts, for ``where``: ``"node (setting; virtualisation)"``
        (e.g. ``"network namespaces, veth"``); the machine's facts come from :func:`host`.
    when : str, optional
        When it was measured (ISO 8601 UTC); default now.
    facts
        The other columns of :data:`EXPERIMENT_COLUMNS` (engine, generator, versions,
        command, notes, ...); any other name is refused. ``versions`` is written after
        routerlab's own (:func:`code_version`), which every record names first.
        ``campaign``, when not given, is the one running (:func:`running_campaign`).
    """
    import time

    unknown = sorted(set(facts) - set(EXPERIMENT_COLUMNS))
    if unknown:
        raise ValueError(f"not columns of experiments.csv: {', '.join(unknown)}")
    h = host()
    rec = {c: "" for c in EXPERIMENT_COLUMNS}
    rec.update(experiment=experiment, source=source,
               where=f"{h['node']} ({setting + '; ' if setting else ''}{h['virt']})",
               when=when or time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), kernel=h["kernel"], cpu=h["cpu"])
    rec.update({k: "" if v is None else v for k, v in facts.items()})
    rec["campaign"] = rec["campaign"] or _CAMPAIGN.get()
    rec["versions"] = "; ".join(x for x in (f"routerlab: {code_version()}", rec["versions"]) if x)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    old = _read_records(folder) if (folder / "experiments.csv").is_file() else pd.DataFrame()
    if len(old):
        old = old[old["experiment"] != experiment]
    write_experiments(pd.concat([old, pd.DataFrame([rec])], ignore_index=True), folder)
    return rec


def write(ds: Dataset, folder, fmt: str = "csv") -> Path:
    """Write a dataset folder (``trials.<fmt>`` and ``experiments.csv``) atomically per file."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"trials.{fmt}"
    tmp = target.with_suffix(target.suffix + ".tmp")
    if fmt == "parquet":
        ds.trials.to_parquet(tmp, index=False)
    elif fmt == "csv":
        ds.trials.to_csv(tmp, index=False)
    else:
        raise ValueError(f"fmt must be 'csv' or 'parquet', got {fmt!r}")
    os.replace(tmp, target)
    write_experiments(ds.experiments, folder)
    return folder


def write_experiments(experiments: pd.DataFrame, folder) -> Path:
    """Write ``experiments.csv`` in ``folder`` (replacing it atomically): the columns of
    :data:`EXPERIMENT_COLUMNS` in their order (empty where a record has no value), then
    any others the table has."""
    target = Path(folder) / "experiments.csv"
    tmp = target.with_suffix(".csv.tmp")
    extra = [c for c in experiments.columns if c not in EXPERIMENT_COLUMNS]
    experiments.reindex(columns=list(EXPERIMENT_COLUMNS) + extra).to_csv(tmp, index=False)
    os.replace(tmp, target)
    return target


class TrialWriter:
    """Appends trials to ``trials.csv`` (or the file ``name`` in ``folder``) as they finish,
    so an interrupted run keeps them.

    Each row is flushed and fsync'ed; :meth:`done` tells which (experiment, load, trial)
    combinations are already on disk, so a resumed sweep skips them.
    """

    def __init__(self, folder, columns: list[str], name: str = "trials.csv"):
        self.path = Path(folder) / name
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.columns = list(columns)
        fresh = not self.path.exists() or self.path.stat().st_size == 0
        if not fresh:
            with open(self.path, newline="") as fh:
                header = next(csv.reader(fh), [])
            if header != self.columns:
                missing = [c for c in self.columns if c not in header]
                extra = [c for c in header if c not in self.columns]
                diff = [f"it lacks {', '.join(missing)}"] if missing else []
                diff += [f"it has {', '.join(extra)} too"] if extra else []
                raise DataFormatError(self.path, 1, f"its columns are not this version's "
                                                    f"({'; '.join(diff) or 'in another order'}), so a run cannot be "
                                                    "resumed into it: write to another folder, or move this file away")
        self._fh = open(self.path, "a", newline="")
        self._w = csv.DictWriter(self._fh, fieldnames=self.columns)
        if fresh:
            self._w.writeheader()
            self._flush()

    def _flush(self):
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def done(self) -> set[tuple[str, float, int]]:
        """(experiment, offered_pps, trial) of every row already written."""
        df = pd.read_csv(self.path)
        return {(str(e), float(o), int(t)) for e, o, t in
                zip(df["experiment"], df["offered_pps"], df["trial"])}

    def write(self, row: dict):
        """Append one trial and flush it to disk."""
        self._w.writerow({k: row.get(k, "") for k in self.columns})
        self._flush()

    def close(self):
        self._fh.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


# -- the other kinds of files the project writes -------------------------------------------

#: Every other kind of data file the project writes: file name -> the columns a reader
#: needs (the full column lists, with units, are in datasets/README.md).
KINDS = {
    "search_results.csv": ("experiment", "engine", "scenario", "method", "kind", "lower_pps", "upper_pps",
                           "limited_by_generator", "generator_ceiling_pps"),
    "search_trials.csv": ("experiment", "engine", "scenario", "kind", "method", "load", "generator_limited"),
    "cells.csv": ("engine", "scenario", "runnable", "reason"),
    "superseded_trials.csv": ("experiment", "offered_pps", "trial", "attempt", "steal"),
    "superseded_search_trials.csv": ("experiment", "probe", "offered_pps", "attempt", "steal"),
    "drops.csv": ("experiment", "offered_pps", "trial", "place", "source", "reason", "packets", "counted_as"),
    "engine_costs.csv": ("experiment", "offered_pps", "trial", "stage", "ns_per_packet"),
    "samples.csv": ("variant", "run", "t", "throughput_bps", "rtt_ms", "cpu_busy"),
    "runs.csv": ("variant", "run", "fail_s", "converge_s", "looped_destinations", "ping_sent", "ping_received"),
    "forwarding.csv": ("engine", "burst", "repeat", "packets", "mpps", "instructions_per_packet"),
    "batch.csv": ("engine", "burst", "repeat", "packets", "mpps", "instructions_per_packet"),
    "consolidation.csv": ("nf", "actions", "variant", "packet", "repeat", "instructions", "ns"),
}


def read_kind(folder, name: str, *, missing_ok: bool = False) -> pd.DataFrame:
    """``folder/name`` (one of :data:`KINDS`), checked for the columns readers need.

    A missing file is an error naming it, or an empty frame with those columns when
    ``missing_ok``."""
    path = Path(folder) / name
    if name not in KINDS:
        raise DataFormatError(path, None, f"not a kind of file routerlab writes ({', '.join(KINDS)})")
    if not path.is_file():
        if missing_ok:
            return pd.DataFrame(columns=list(KINDS[name]))
        raise DataFormatError(path, None, "no such file")
    df = _read_table(path)
    lacking = [c for c in KINDS[name] if c not in df.columns]
    if lacking:
        raise DataFormatError(path, 1, f"missing column(s) {', '.join(lacking)}")
    return df


def with_repeats(df: pd.DataFrame) -> pd.DataFrame:
    """A search file with its ``repeat`` column (0-based; files written before searches
    were repeated hold one search each: repeat 0) and its ``method`` (ours when empty)."""
    from routerlab.analysis.repeats import repeat_of

    rep = repeat_of(df)
    method = df["method"].fillna("routerlab") if "method" in df else "routerlab"
    return df.assign(repeat=rep, method=method)


def read_searches(folders) -> pd.DataFrame:
    """The PDR/NDR search results of every folder that has any (``search_results.csv``),
    one row per search and repeat (``repeat``, 0-based: :mod:`routerlab.analysis.repeats`
    makes the repeats one answer): lower_pps is the answer, upper_pps the next failing load; with two
    columns derived from the folder's ``search_trials.csv``: ``generator_bound`` (the
    generator, not the router, bounded the answer: :func:`routerlab.analysis.stats.generator_bound`)
    and ``answer`` (:func:`routerlab.analysis.stats.search_answer`, the answer as it is shown)."""
    from routerlab.analysis import stats

    parts = []
    for f in folders:
        if not (Path(f) / "search_results.csv").is_file():
            continue
        res = with_repeats(read_kind(f, "search_results.csv"))
        probes = with_repeats(read_kind(f, "search_trials.csv")) if (Path(f) / "search_trials.csv").is_file() else None
        res["generator_bound"] = stats.searches_bound(res, probes)
        res["answer"] = [stats.search_answer(r.lower_pps, r.upper_pps, r.generator_bound) for r in res.itertuples()]
        parts.append(res)
    return (pd.concat(parts, ignore_index=True) if parts
            else pd.DataFrame(columns=list(KINDS["search_results.csv"]) + ["generator_bound", "answer"]))


def each_search(folder) -> list[tuple[dict, pd.DataFrame, pd.DataFrame | None, pd.DataFrame | None]]:
    """Every search of the dataset ``folder``, its repeats made one answer, with what that
    answer was made from: one tuple per experiment, kind and method, in the order
    measured, of the answer (a row of :func:`routerlab.analysis.repeats.from_searches`, as
    a dict), its repeats' rows of ``search_results.csv`` (:func:`read_searches`), its
    trials (``search_trials.csv``; None without that file) and the attempts trial
    validation set aside for those trials (``superseded_search_trials.csv``; None without
    it: :func:`routerlab.analysis.repeats.set_aside_of`)."""
    from routerlab.analysis import repeats

    res = read_searches([folder])
    path = Path(folder) / "search_trials.csv"
    probes = with_repeats(read_kind(folder, "search_trials.csv")) if path.is_file() else None
    again = Path(folder) / "superseded_search_trials.csv"
    again = with_repeats(read_kind(folder, again.name)) if again.is_file() else None
    out = []
    for r in repeats.from_searches(res).to_dict("records"):
        mine = (res["experiment"] == r["experiment"]) & (res["kind"] == r["kind"]) & (res["method"] == r["method"])
        t = None
        if probes is not None:
            t = probes[(probes["experiment"] == r["experiment"]) & (probes["kind"] == r["kind"])
                       & (probes["method"] == r["method"])]
        out.append((r, res[mine], t, repeats.set_aside_of(t, again)))
    return out


def read_drops(folders) -> pd.DataFrame:
    """Every counter that moved in the trials of every folder that has any
    (``drops.csv``, written by the testbed's loss attribution), one row per trial, place
    and counter; empty (with its columns) where no folder has one."""
    parts = [read_kind(f, "drops.csv") for f in folders if (Path(f) / "drops.csv").is_file()]
    return (pd.concat(parts, ignore_index=True) if parts
            else pd.DataFrame(columns=list(KINDS["drops.csv"])))


def search_pdr(searches: pd.DataFrame) -> pd.DataFrame:
    """Each engine's PDR from search results (:func:`read_searches`), one row per search
    (its repeats made one answer, :func:`routerlab.analysis.repeats.from_searches`):
    columns ``engine``, ``pdr_pps`` (the median of the repeats), ``low_pps``,
    ``high_pps``, ``repeats``, ``generator_bound``, ``at_least`` and ``bound``. ``at_least``:
    the router's PDR is only known to be at least ``pdr_pps``, a lower bound never to be
    set against another engine as a ratio; ``bound`` says why ("limited by the generator":
    a trial at a repeat's failing load was generator-limited; "passed at the ceiling": a
    repeat ended on the ceiling, passed, so no failing load bounds it, though a shorter
    trial there may have failed on the way), empty for an answer that is the router's own."""
    from routerlab.analysis import repeats, stats

    # our own search's answers (MLRsearch's stand beside them in bench search's rows)
    pdr = searches[(searches["kind"] == "pdr") & (searches.get("method", "routerlab") == "routerlab")]
    if "generator_bound" not in pdr:
        raise ValueError("search_pdr takes read_searches' rows (they carry generator_bound)")
    if "experiment" not in pdr:  # rows of one search each, by engine
        pdr = pdr.assign(experiment=pdr["engine"])
    one = repeats.from_searches(pdr)
    gen = np.array([bool(g["generator_bound"].astype(bool).any()) for _, g in pdr.groupby("experiment", sort=False)],
                   dtype=bool) if len(pdr) else np.zeros(0, bool)
    out = one.rename(columns={"median_pps": "pdr_pps"})[["engine", "pdr_pps", "low_pps", "high_pps", "repeats"]]
    out = out.reset_index(drop=True).assign(generator_bound=gen)
    at_least = one["at_least"].astype(bool).to_numpy()
    out["at_least"] = at_least
    out["bound"] = np.where(gen, stats.LIMITED_BY_GENERATOR, np.where(at_least, stats.PASSED_AT_CEILING, ""))
    return out


def read_fast_reroute(folder) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A fast-reroute dataset: (samples, runs). Samples: one row per run and time step
    (``t`` seconds, ``throughput_bps``, ``rtt_ms``, ``cpu_busy`` ratio); runs: one row per
    run (failure and convergence times in seconds, pings sent and received)."""
    return read_kind(folder, "samples.csv"), read_kind(folder, "runs.csv")


def read_microbench(folder, benchmark: str) -> pd.DataFrame:
    """One microbenchmark's runs (``forwarding``, ``batch`` or ``consolidation``)."""
    return read_kind(folder, f"{benchmark}.csv")


def invocation() -> str:
    """How this process was started, for an environment record's ``command``: the
    ``routerlab`` command line as typed, else the program that called the library (a
    notebook's kernel, a script)."""
    import shlex
    import sys

    prog = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else "python"
    if prog == "routerlab":
        return shlex.join(["routerlab", *sys.argv[1:]])
    return f"{prog} (through the routerlab library)"


def host() -> dict:
    """This machine, for every environment record: ``node`` (host name), ``virt``
    ("hypervisor" or "bare metal"), ``kernel`` (release) and ``cpu`` (model x count)."""
    import platform

    try:
        cpuinfo = Path("/proc/cpuinfo").read_text()
    except OSError:
        cpuinfo = ""
    cpu = next((line.split(":", 1)[1].strip() for line in cpuinfo.splitlines() if line.startswith("model name")),
               "unknown")
    return {"node": platform.node(), "virt": "hypervisor" if "hypervisor" in cpuinfo else "bare metal",
            "kernel": platform.release(), "cpu": f"{cpu} x{os.cpu_count()}"}


#: The project's top-level folders that a built package carries (setup.py bundles them).
BUNDLED = ("datasets", "notebooks", "routers", "p4")




def datasets_dir() -> Path:
    """The ``datasets/`` folder: ``$ROUTERLAB_DATASETS``, else the clone's or the package's."""
    env = os.environ.get("ROUTERLAB_DATASETS")
    return Path(env) if env else project_dir("datasets")


def committed() -> list[Path]:
    """The measured datasets the project carries (a clone's ``datasets/``, or those
    bundled with an installed routerlab): every folder with an ``experiments.csv``."""
    return sorted(p.parent for p in datasets_dir().glob("*/experiments.csv"))


def reference(name: str) -> pd.DataFrame:
    """A table transcribed from a cited publication, from ``datasets/reference/<name>.csv``."""
    return pd.read_csv(datasets_dir() / "reference" / f"{name}.csv")


#: The smallest trials file ``routerlab assess`` takes from another tool (TRex, MoonGen,
#: a pktgen log turned into CSV): per trial, the offered load (pps), the packets sent and
#: received, and which run (repetition) of that load it was. The file is one experiment,
#: named after the file.
FOREIGN_COLUMNS = ("offered_pps", "tx", "rx", "run")


def foreign_trials(path) -> pd.DataFrame | None:
    """The trials of a CSV file of :data:`FOREIGN_COLUMNS` (and no ``experiment``
    column), as a trial table (``run`` becomes ``trial``, the file's name the
    experiment), checked as any trial table is; None for any other file."""
    path = Path(path)
    if path.suffix != ".csv" or not path.is_file():
        return None
    head = set(pd.read_csv(path, nrows=0).columns)
    if "experiment" in head or not set(FOREIGN_COLUMNS) <= head:
        return None
    df = pd.read_csv(path).rename(columns={"run": "trial"}).assign(experiment=path.stem)
    return validate_trials(df, str(path))


def load_any(path, fmt: str = "auto") -> pd.DataFrame:
    """Trials from a PASTRAMI raw file or folder, or a routerlab dataset (file or folder).

    Parameters
    ----------
    fmt : {"auto", "pastrami", "routerlab"}
        ``auto`` looks at the content: a folder with ``trials.*`` or a ``.csv``/``.parquet``
        file is routerlab; a ``.txt`` file starting ``[[`` (or a folder of them) is PASTRAMI.
        A routerlab ``.csv`` may also be another tool's smallest trials file
        (:func:`foreign_trials`).
    """
    from routerlab.analysis import pastrami

    path = Path(path)
    if fmt not in ("auto", "pastrami", "routerlab"):
        raise ValueError(f"format must be auto, pastrami or routerlab, got {fmt!r}")
    if fmt == "auto":
        if path.is_dir():
            fmt = "routerlab" if any((path / f).is_file() for f in ("trials.csv", "trials.parquet")) else "pastrami"
        elif path.suffix in (".csv", ".parquet"):
            fmt = "routerlab"
        elif pastrami.is_raw_file(path):
            fmt = "pastrami"
        elif not path.exists():
            raise DataFormatError(path, None, "no such file or folder")
        else:
            raise DataFormatError(path, 1, "neither a PASTRAMI raw file nor a routerlab dataset")
    if fmt == "routerlab":
        foreign = foreign_trials(path)
        return foreign if foreign is not None else read(path).joined()
    if path.is_dir():
        return pastrami.read_dir(path)
    return pastrami.read_raw(path)


def read_inputs(paths, fmt: str = "auto") -> tuple[list[tuple], pd.DataFrame | None]:
    """Read the inputs of ``routerlab assess``: PASTRAMI raw files and folders of them,
    and routerlab datasets (file or folder).

    Every PASTRAMI raw file among the inputs is read in one pass
    (:func:`pastrami.read_files`) into one table, so that they can be assessed in one
    batch; a malformed file is reported on its own and does not hide the others.

    Returns
    -------
    (list of (label, trials, error, key), pandas.DataFrame or None)
        One entry per input file or dataset, in the order given (a folder of raw files
        gives its files sorted, with those only PASTRAMI's archive holds when it is there:
        :func:`pastrami.raw_sources`; a file named twice comes twice): ``label`` is the path as a
        string; ``trials`` is the trial table of a routerlab dataset, or None for a raw
        file, whose trials are in the second value under the experiment id ``key`` (one
        per entry, so that no two files are ever pooled); ``error`` is the
        :class:`DataFormatError` of an input that cannot be read. The second value is the
        table of every readable raw file (None when there is none).
    """
    from routerlab.analysis import pastrami

    entries, raw = [], []
    for path in map(Path, paths):
        if path.is_dir() and fmt != "routerlab" and not any(
                (path / f).is_file() for f in ("trials.csv", "trials.parquet")):
            # its loose files, and those only PASTRAMI's archive holds when it is there
            files, problems = pastrami.raw_sources(path)
            # a copy of the set without its archive: its files are judged, what it leaves out said once
            for note in pastrami.left_out(path):
                logging.getLogger(__name__).warning("%s", note)
            if not files and not problems:
                entries.append((str(path), None, DataFormatError(path, None, "no PASTRAMI .txt files or trials.* here"),
                                None))
            entries += [(label, None, e, None) for label, e in problems.items()]
            entries += [(str(f), None, None, str(len(raw) + i)) for i, f in enumerate(files)]
            raw += files
        elif path.is_file() and (fmt == "pastrami" or fmt == "auto" and path.suffix not in (".csv", ".parquet")
                                 and pastrami.is_raw_file(path)):
            entries.append((str(path), None, None, str(len(raw))))
            raw.append(path)
        else:
            try:
                entries.append((str(path), load_any(path, fmt), None, None))
            except DataFormatError as e:
                entries.append((str(path), None, e, None))
    keys = [str(i) for i in range(len(raw))]
    trials, errors = pastrami.read_files(raw, keys)
    # read_files keys its errors by the file as given; a file named twice fails twice
    failed = {key: errors[f] for key, f in zip(keys, raw) if f in errors}
    entries = [(label, t, e or failed.get(key), key) for label, t, e, key in entries]
    return entries, trials
