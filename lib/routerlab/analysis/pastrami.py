"""The PASTRAMI raw measurement format and the authors' published data set.

A raw file has one line per offered load, each a JSON array::

    [[rate_pps, counter_at_start], [tx, rx, counter], [tx, rx, counter], ...]

or, from experiments with CPU sampling, 5-field runs
``[tx, rx, delivery_ratio, cpu_load_mean, cpu_load_std]``. The set-up of an experiment is
encoded in its file name (testbed, kernel, environment, NIC ring, IRQ pinning, class,
repetition); :func:`parse_name` turns it into columns.

The published set (107 files, repository netgroup/pastrami) is fetched on demand with
pooch, pinned by commit and SHA-256 (``data/pastrami-registry.txt``), and cached; the
environment variable ``ROUTERLAB_PASTRAMI_DIR`` names a local copy instead. The raw files
are never part of this repository.
"""

from __future__ import annotations

import json
import os
import re
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd

from routerlab.errors import DataFormatError, DataUnavailable
from routerlab.progress import Progress, silent, Step

#: Commit of netgroup/pastrami that the registry's hashes belong to.
PASTRAMI_COMMIT = "c4a152cd3f9f65496d1b26cb8cadb7f87e824a8a"
PASTRAMI_URL = f"https://raw.githubusercontent.com/netgroup/pastrami/{PASTRAMI_COMMIT}/"
ENV_DIR = "ROUTERLAB_PASTRAMI_DIR"

#: Columns that :func:`parse_name` adds, with their meaning.
SETUP_COLUMNS = {
    "experiment_class": "'routing' (IPv6 routing) or 'ebpf'",
    "location": "'CloudLab' or 'mazinga' (local server)",
    "testbed": "testbed instance: tb1, tb2, tb3 or mazinga",
    "environment": "bare-metal, vm or ns (network namespaces / container)",
    "kernel": "Linux kernel version of the router, e.g. '5.15'",
    "runs_planned": "trials per load named in the file (30 or 50)",
    "trial_duration_s": "duration of each trial in seconds (10 unless exp_t_N)",
    "nic_ring": "'large' (nic_buf_N) or 'default'",
    "nic_ring_size": "NIC ring entries when set (e.g. 4096), else empty",
    "pinning": "'unpinned', '1cpu' (both ports' IRQs on one CPU) or '2cpu'",
    "irq": "the IRQ spec as written, e.g. 'pf0-4_pf1-6'",
    "execution": "repetition of the same set-up (1 = first)",
    "after_reboot": "the repetition followed a reboot",
    "nic_vendor": "NIC vendor named in the file (intel)",
}

_TOKENS = [
    ("testbed", re.compile(r"(?:^|_)clab_(tb\d+b?)(?=_)")),
    ("runs_planned", re.compile(r"_raw_(\d+)(?=_)")),
    ("trial_duration_s", re.compile(r"_exp_t_(\d+)(?=_)")),
    ("kernel", re.compile(r"_k(\d+\.\d+)(?=_)")),
    ("nic_ring_size", re.compile(r"_nic_buf_(\d+)")),
    ("irq", re.compile(r"_irq_([a-z]+\d+-\d+_[a-z]+\d+-\d+)")),
    ("execution", re.compile(r"_(\d+)(?:st|nd|rd|th)_exec")),
]


def parse_name(name: str) -> dict:
    """Set-up of a PASTRAMI experiment, read from its file name.

    Parameters
    ----------
    name : str
        File name or path (folders are ignored), e.g.
        ``clab_tb3_raw_50_exp_t_10_k5.18_intel_bare-metal_nic_buf_4096_irq_pf0-4_pf1-6.txt``.

    Returns
    -------
    dict
        The keys of :data:`SETUP_COLUMNS`; a part that the name does not state gets the
        paper's default (10 s trials, default NIC ring, unpinned, first execution).
    """
    stem = Path(name).name
    stem = stem[:-4] if stem.endswith(".txt") else stem
    found = {}
    for key, rx in _TOKENS:
        m = rx.search(stem)
        found[key] = m.group(1) if m else None
    if stem.startswith("mazinga"):
        location, testbed = "mazinga", "mazinga"
    else:
        location, testbed = "CloudLab", found["testbed"] or "unknown"
    env = next((e for e in ("bare-metal", "vm", "ns") if f"_{e}_" in stem + "_"), "unknown")
    irq = found["irq"]
    if irq:
        cpus = re.findall(r"-(\d+)", irq)
        pinning = "1cpu" if len(set(cpus)) == 1 else "2cpu"
    else:
        pinning = "unpinned"
    ring = found["nic_ring_size"]
    return {
        "experiment_class": "ebpf" if "class_ebpf" in stem else "routing",
        "location": location,
        "testbed": testbed,
        "environment": env,
        "kernel": found["kernel"] or "unknown",
        "runs_planned": int(found["runs_planned"]) if found["runs_planned"] else None,
        "trial_duration_s": float(found["trial_duration_s"] or 10),
        "nic_ring": "large" if ring else "default",
        "nic_ring_size": int(ring) if ring else None,
        "pinning": pinning,
        "irq": irq or "",
        "execution": int(found["execution"] or 1),
        "after_reboot": "after-reboot" in stem,
        "nic_vendor": "intel" if "_intel_" in stem else "",
    }


def title(setup: dict, runs: int | None = None) -> str:
    """A panel title in the paper's style: class, testbed, environment, runs, T, kernel,
    pinning, NIC ring."""
    runs = runs or setup.get("runs_planned")
    ring = f"NIC ring {setup['nic_ring_size']}" if setup.get("nic_ring_size") else "default NIC ring"
    rep = f", exec {setup['execution']}" if setup.get("execution", 1) > 1 else ""
    return (f"{setup['experiment_class']}, {setup['location']} {setup['testbed']}, "
            f"{setup['environment']}, {runs} runs, T = {setup['trial_duration_s']:g} s, "
            f"kernel {setup['kernel']}, {setup['pinning']}, {ring}{rep}")


#: Columns of the trial table that come from the file's records, in order.
_RECORD_COLUMNS = ["offered_pps", "trial", "tx", "rx", "cpu_load", "line"]


def _runs_slowly(path, lineno: int, rate: float, runs: list) -> list[tuple]:
    """The runs of one record, checked one by one: the reference for :func:`_parse`, and
    the path that finds the first malformed run and names it."""
    rows = []
    for i, run in enumerate(runs):
        if not (isinstance(run, list) and len(run) in (3, 5)
                and all(isinstance(x, (int, float)) for x in run)):
            raise DataFormatError(path, lineno, f"run {i + 1}: expected 3 or 5 numbers, got {run!r}")
        tx, rx = run[0], run[1]
        if tx <= 0:
            raise DataFormatError(path, lineno, f"run {i + 1}: offered packets must be > 0, got {tx}")
        if rx < 0:
            raise DataFormatError(path, lineno, f"run {i + 1}: received packets must be >= 0, got {rx}")
        # The 5-field form's CPU load is in percent; the tidy table keeps ratios.
        cpu = run[3] / 100.0 if len(run) == 5 else float("nan")
        rows.append((float(rate), i, int(tx), int(rx), cpu, lineno))
    return rows


def _parse(path, text: str) -> dict[str, np.ndarray]:
    """The records of one raw file as column arrays (:data:`_RECORD_COLUMNS`).

    Each line is decoded by ``json`` and its runs checked as one numpy array; only a line
    that fails that check is walked run by run (:func:`_runs_slowly`), which either names
    the first bad run or, for odd but valid input (booleans, huge integers), gives the
    same rows.
    """
    parts = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as e:
            raise DataFormatError(path, lineno, f"not a JSON array ({e.msg})") from None
        if not (isinstance(rec, list) and len(rec) >= 2 and isinstance(rec[0], list) and rec[0]):
            raise DataFormatError(path, lineno, "expected [[rate_pps, counter], [tx, rx, ...], ...]")
        rate = rec[0][0]
        if not isinstance(rate, (int, float)) or rate <= 0:
            raise DataFormatError(path, lineno, f"offered rate must be a positive number, got {rate!r}")
        runs = rec[1:]
        try:
            a = np.array(runs)
        except ValueError:  # ragged: runs of different lengths
            a = None
        if (a is None or a.ndim != 2 or a.shape[1] not in (3, 5) or a.dtype.kind not in "iu"
                or not (a[:, 0] > 0).all() or not (a[:, 1] >= 0).all()):
            rows = _runs_slowly(path, lineno, rate, runs)
            parts.append({c: np.array(v) for c, v in zip(_RECORD_COLUMNS, zip(*rows))})
            continue
        n = len(a)
        parts.append({
            "offered_pps": np.full(n, float(rate)),
            "trial": np.arange(n, dtype=np.int64),
            "tx": a[:, 0].astype(np.int64),
            "rx": a[:, 1].astype(np.int64),
            # The 5-field form's CPU load is in percent; the tidy table keeps ratios.
            "cpu_load": a[:, 3] / 100.0 if a.shape[1] == 5 else np.full(n, np.nan),
            "line": np.full(n, lineno, dtype=np.int64),
        })
    if not parts:
        raise DataFormatError(path, None, "no measurements in file")
    return {c: np.concatenate([p[c] for p in parts]) for c in _RECORD_COLUMNS}


def _setup_column(values: list, counts: np.ndarray) -> np.ndarray:
    """One value per file, repeated for each of its trials; a column where some file
    leaves the value unstated (None) stays an object column, as pandas would make it."""
    if any(v is None for v in values):
        out = np.empty(int(counts.sum()), dtype=object)
        ends = np.cumsum(counts)
        for v, start, end in zip(values, ends - counts, ends):
            out[start:end] = v
        return out
    if all(isinstance(v, str) for v in values):
        # Taking from the few distinct strings is ten times faster than converting one
        # string per trial into pandas' string column.
        return pd.array(values, dtype="str").take(np.repeat(np.arange(len(values)), counts))
    return np.repeat(np.array(values), counts)


def read_files(files, experiments=None) -> tuple[pd.DataFrame | None, dict]:
    """Read many raw files into one trial table, keeping the files that cannot be read apart.

    Parameters
    ----------
    files : list of path-like
        The raw files.
    experiments : list of str, optional
        Experiment id of each file; default: the file name without ``.txt``.

    Returns
    -------
    (pandas.DataFrame or None, dict)
        The trials of every readable file, as :func:`read_raw` gives them, in the order of
        ``files`` (None when no file could be read); and, for each unreadable file, its
        :class:`DataFormatError`, keyed by the path as given.
    """
    files = list(files)
    experiments = list(experiments) if experiments is not None else [None] * len(files)
    good, errors = [], {}
    for f, exp in zip(files, experiments):
        path = Path(f)
        try:
            text = path.read_text()
        except OSError as e:
            errors[f] = DataFormatError(path, None, f"cannot read: {e.strerror or e}")
            continue
        except UnicodeDecodeError as e:
            errors[f] = DataFormatError(path, None, f"not a text file (byte {e.start} is not UTF-8)")
            continue
        try:
            cols = _parse(path, text)
        except DataFormatError as e:
            errors[f] = e
            continue
        good.append((path, exp or path.name.removesuffix(".txt"), parse_name(path.name), cols))
    if not good:
        return None, errors
    counts = np.array([len(cols["tx"]) for *_, cols in good])
    data = {"experiment": _setup_column([exp for _, exp, _, _ in good], counts)}
    data |= {c: np.concatenate([cols[c] for *_, cols in good]) for c in _RECORD_COLUMNS}
    data["duration_s"] = np.repeat(np.array([s["trial_duration_s"] for _, _, s, _ in good], dtype=float), counts)
    data["source"] = _setup_column([str(p) for p, *_ in good], counts)
    for k in SETUP_COLUMNS:
        data[k] = _setup_column([s[k] for _, _, s, _ in good], counts)
    return pd.DataFrame(data), errors


def read_raw(path, experiment: str | None = None) -> pd.DataFrame:
    """Read one PASTRAMI raw file into the tidy trial table.

    Parameters
    ----------
    path : path-like
        The raw file.
    experiment : str, optional
        Experiment id; default: the file name without ``.txt``.

    Returns
    -------
    pandas.DataFrame
        One row per trial with ``experiment``, ``offered_pps``, ``trial`` (0-based within
        its load), ``tx``, ``rx``, ``duration_s``, ``cpu_load`` (5-field files, else NaN),
        ``source`` and ``line``, plus the set-up columns of :func:`parse_name`.

    Raises
    ------
    DataFormatError
        Naming the file and line of the first malformed record.
    """
    trials, errors = read_files([path], [experiment])
    if errors:
        raise next(iter(errors.values()))
    return trials


def registry() -> dict[str, str]:
    """Relative path -> ``sha256:...`` hash of each published raw file (107 files)."""
    text = resources.files("routerlab").joinpath("data/pastrami-registry.txt").read_text()
    return dict(line.split() for line in text.splitlines() if line.strip())


def _cache_dir() -> Path:
    import pooch

    return Path(pooch.os_cache("routerlab")) / f"pastrami-{PASTRAMI_COMMIT[:12]}"


def locate(data_dir: str | os.PathLike | None = None, *, download: bool = True) -> Path:
    """Folder that holds the PASTRAMI raw files, fetching the published set if needed.

    Order: ``data_dir`` if given; else ``$ROUTERLAB_PASTRAMI_DIR``; else the pooch cache,
    downloading (pinned by commit and SHA-256) what is missing when ``download``.

    Raises
    ------
    DataUnavailable
        With a one-line explanation, when no copy is at hand and none can be fetched.
    """
    given = data_dir or os.environ.get(ENV_DIR)
    if given:
        p = Path(given).expanduser()
        if not p.is_dir() or not any(p.rglob("*.txt")):
            src = "data_dir" if data_dir else ENV_DIR
            raise DataUnavailable(f"PASTRAMI data: {src}={given} is not a folder with raw .txt files")
        return p
    reg = registry()
    cache = _cache_dir()
    missing = [f for f in reg if not (cache / f).is_file()]
    if not missing:
        return cache
    if not download:
        raise DataUnavailable(f"PASTRAMI data: {len(missing)} of {len(reg)} files not cached in {cache} "
                              f"(run `routerlab fetch-pastrami`, or set {ENV_DIR})")
    fetch(cache=cache)
    return cache


def fetch(cache: Path | None = None, progress: Progress = silent) -> Path:
    """Download the published PASTRAMI raw files into the cache (pinned, hash-checked).
    ``progress`` is told the files to fetch (0 of them done), then each as it arrives.

    Raises
    ------
    DataUnavailable
        When the download fails (offline, or the host does not answer), in one line.
    """
    import pooch

    cache = cache or _cache_dir()
    pup = pooch.create(path=cache, base_url=PASTRAMI_URL, registry=registry(), retry_if_failed=1)
    files = list(pup.registry)
    todo = [f for f in files if not (cache / f).is_file()]
    if todo:
        progress(Step("fetching PASTRAMI", 0, len(todo)))
    for i, f in enumerate(todo):
        try:
            pup.fetch(f, downloader=pooch.HTTPDownloader(timeout=30, progressbar=False))
        except Exception as e:  # noqa: BLE001 - any network failure becomes one line
            reason = type(e).__name__
            raise DataUnavailable(
                f"PASTRAMI data: cannot download {f} from netgroup/pastrami@{PASTRAMI_COMMIT[:7]} "
                f"({reason}); offline? set {ENV_DIR} to a local copy") from None
        progress(Step("fetching PASTRAMI", i + 1, len(todo)))
    return cache


def read_dir(folder, pattern: str = "**/*.txt") -> pd.DataFrame:
    """Read every raw file below ``folder``; the experiment id is the relative path
    without ``.txt`` (e.g. ``bare-metal/run_30/clab_tb3_raw_30_...``)."""
    folder = Path(folder)
    files = sorted(folder.glob(pattern))
    if not files:
        raise DataUnavailable(f"PASTRAMI data: no raw .txt files below {folder}")
    trials, errors = read_files(files, [str(f.relative_to(folder).with_suffix("")) for f in files])
    if errors:
        raise next(iter(errors.values()))
    return trials


def is_raw_file(path) -> bool:
    """True if ``path`` looks like a PASTRAMI raw file (its first line is ``[[rate, c], [...``)."""
    try:
        with open(path, errors="replace") as fh:
            head = fh.read(64).lstrip()
    except OSError:
        return False
    return bool(re.match(r"\[\s*\[\s*[\d.]+\s*,", head))


def verdict_table(trials: pd.DataFrame, assessments) -> pd.DataFrame:
    """One row per experiment: its set-up columns, verdict, PDR and saturation loads (pps)."""
    from routerlab.analysis.stats import records

    setup = trials.drop_duplicates("experiment").set_index("experiment")
    cols = [c for c in SETUP_COLUMNS if c in setup.columns]
    table = records(assessments).rename(columns={"runs_max": "runs"})
    table = table.join(setup[cols], on="experiment")
    table["title"] = [title(row, row["runs"]) for row in table.to_dict("records")]
    return table
