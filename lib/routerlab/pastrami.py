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

import pandas as pd

from .errors import DataFormatError, DataUnavailable

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
    path = Path(path)
    exp = experiment or path.name.removesuffix(".txt")
    setup = parse_name(path.name)
    rows = []
    try:
        text = path.read_text()
    except OSError as e:
        raise DataFormatError(path, None, f"cannot read: {e.strerror or e}") from e
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
        for i, run in enumerate(rec[1:]):
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
    if not rows:
        raise DataFormatError(path, None, "no measurements in file")
    df = pd.DataFrame(rows, columns=["offered_pps", "trial", "tx", "rx", "cpu_load", "line"])
    df.insert(0, "experiment", exp)
    df["duration_s"] = setup["trial_duration_s"]
    df["source"] = str(path)
    for k, v in setup.items():
        df[k] = v
    return df


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


def fetch(cache: Path | None = None, progress: bool = True) -> Path:
    """Download the published PASTRAMI raw files into the cache (pinned, hash-checked).

    Raises
    ------
    DataUnavailable
        When the download fails (offline, or the host does not answer), in one line.
    """
    import pooch

    cache = cache or _cache_dir()
    pup = pooch.create(path=cache, base_url=PASTRAMI_URL, registry=registry(), retry_if_failed=1)
    from rich.progress import track

    files = list(pup.registry)
    todo = [f for f in files if not (cache / f).is_file()]
    it = track(todo, description="fetching PASTRAMI") if progress and todo else todo
    for f in it:
        try:
            pup.fetch(f, downloader=pooch.HTTPDownloader(timeout=30, progressbar=False))
        except Exception as e:  # noqa: BLE001 - any network failure becomes one line
            reason = type(e).__name__
            raise DataUnavailable(
                f"PASTRAMI data: cannot download {f} from netgroup/pastrami@{PASTRAMI_COMMIT[:7]} "
                f"({reason}); offline? set {ENV_DIR} to a local copy") from None
    return cache


def read_dir(folder, pattern: str = "**/*.txt") -> pd.DataFrame:
    """Read every raw file below ``folder``; the experiment id is the relative path
    without ``.txt`` (e.g. ``bare-metal/run_30/clab_tb3_raw_30_...``)."""
    folder = Path(folder)
    files = sorted(folder.glob(pattern))
    if not files:
        raise DataUnavailable(f"PASTRAMI data: no raw .txt files below {folder}")
    return pd.concat([read_raw(f, str(f.relative_to(folder).with_suffix(""))) for f in files],
                     ignore_index=True)


def is_raw_file(path) -> bool:
    """True if ``path`` looks like a PASTRAMI raw file (its first line is ``[[rate, c], [...``)."""
    try:
        with open(path) as fh:
            head = fh.read(64).lstrip()
    except OSError:
        return False
    return bool(re.match(r"\[\s*\[\s*[\d.]+\s*,", head))


def verdict_table(trials: pd.DataFrame, assessments) -> pd.DataFrame:
    """One row per experiment: its set-up columns, verdict, PDR and saturation loads (pps)."""
    from .stats import records

    setup = trials.drop_duplicates("experiment").set_index("experiment")
    cols = [c for c in SETUP_COLUMNS if c in setup.columns]
    table = records(assessments).rename(columns={"runs_max": "runs"})
    table = table.join(setup[cols], on="experiment")
    table["title"] = [title(row, row["runs"]) for row in table.to_dict("records")]
    return table
