"""The PASTRAMI raw measurement format and the authors' published data set.

A raw file has one line per offered load, each a JSON array::

    [[rate_pps, counter_at_start], [tx, rx, counter], [tx, rx, counter], ...]

or, from experiments with CPU sampling, 5-field runs
``[tx, rx, delivery_ratio, cpu_load_mean, cpu_load_std]``. The set-up of an experiment is
encoded in its file name (testbed, kernel, environment, NIC ring, IRQ pinning, class,
repetition); :func:`parse_name` turns it into columns.

The published set (repository netgroup/pastrami) is its loose raw files and the authors'
archive ``misure.zip``, which holds them again and a few files that only it holds
(:func:`archived`). Both are fetched on demand with pooch, pinned by commit and SHA-256
(``data/pastrami-registry.txt``), and cached; the environment variable
``ROUTERLAB_PASTRAMI_DIR`` names a local copy instead. A folder is read as one set
(:func:`raw_sources`): its loose files, and the archive's own files when the archive is
there and is the pinned one; a copy without the archive is read as its loose files, and
what that leaves out is said in one line (:func:`left_out`). The raw files are never part
of this repository.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import numpy as np
import pandas as pd

from routerlab.analysis import pinned
from routerlab.errors import DataFormatError, DataUnavailable, RouterlabError
from routerlab.progress import Progress, silent

#: Commit of netgroup/pastrami that the registry's hashes belong to.
PASTRAMI_COMMIT = "c4a152cd3f9f65496d1b26cb8cadb7f87e824a8a"
PASTRAMI_URL = f"https://raw.githubusercontent.com/netgroup/pastrami/{PASTRAMI_COMMIT}/"
ENV_DIR = "ROUTERLAB_PASTRAMI_DIR"
#: The authors' archive of their raw files, at the top of the repository.
ARCHIVE = "misure.zip"

log = logging.getLogger(__name__)

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


@dataclass(frozen=True)
class Member:
    """A published raw file that only the archive holds, read from inside it.

    Attributes
    ----------
    archive : pathlib.Path
        The archive file (``misure.zip``) in the folder being read.
    name : str
        The member's name inside the archive.
    path : str
        The file's path in the published set, as a loose file would have it (its
        experiment id is this without ``.txt``).
    sha256 : str
        The member's SHA-256 as the registry pins it (hex).
    """

    archive: Path
    name: str
    path: str
    sha256: str

    def __str__(self) -> str:
        return f"{self.archive}:{self.name}"


def _text(source) -> str:
    """The text of a raw file, loose or an archive's :class:`Member` (whose content is
    checked against its pin)."""
    if not isinstance(source, Member):
        return Path(source).read_text()
    try:
        with zipfile.ZipFile(source.archive) as z:
            data = z.read(source.name)
    except KeyError:
        raise DataFormatError(source, None, f"not in {source.archive.name}") from None
    except zipfile.BadZipFile as e:
        raise DataFormatError(source, None, f"{source.archive.name} cannot be read as a zip archive ({e})") from None
    got = hashlib.sha256(data).hexdigest()
    if got != source.sha256:
        raise DataFormatError(source, None, f"SHA-256 {got} is not the pinned {source.sha256}")
    return data.decode()


def read_files(files, experiments=None) -> tuple[pd.DataFrame | None, dict]:
    """Read many raw files into one trial table, keeping the files that cannot be read apart.

    Parameters
    ----------
    files : list of path-like or Member
        The raw files: loose files, or files inside the published archive (:class:`Member`).
    experiments : list of str, optional
        Experiment id of each file; default: the file name without ``.txt``.

    Returns
    -------
    (pandas.DataFrame or None, dict)
        The trials of every readable file, as :func:`read_raw` gives them, in the order of
        ``files`` (None when no file could be read); and, for each unreadable file, its
        :class:`DataFormatError`, keyed by the file as given.
    """
    files = list(files)
    experiments = list(experiments) if experiments is not None else [None] * len(files)
    good, errors = [], {}
    for f, exp in zip(files, experiments):
        path = f if isinstance(f, Member) else Path(f)
        name = PurePosixPath(f.path).name if isinstance(f, Member) else path.name
        try:
            text = _text(f)
        except OSError as e:
            errors[f] = DataFormatError(path, None, f"cannot read: {e.strerror or e}")
            continue
        except UnicodeDecodeError as e:
            errors[f] = DataFormatError(path, None, f"not a text file (byte {e.start} is not UTF-8)")
            continue
        except DataFormatError as e:
            errors[f] = e
            continue
        try:
            cols = _parse(path, text)
        except DataFormatError as e:
            errors[f] = e
            continue
        good.append((path, exp or name.removesuffix(".txt"), parse_name(name), cols))
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


def _pins() -> list[list[str]]:
    """The registry's lines, split: ``[path, "sha256:HEX"]``, or ``[path, "sha256:HEX",
    "ARCHIVE:MEMBER"]`` for a file that only the archive holds."""
    return pinned.registry_lines("pastrami-registry.txt")


def registry() -> dict[str, str]:
    """What is downloaded of the published set: relative path -> ``sha256:...``, for each
    loose raw file and for the archive (:data:`ARCHIVE`)."""
    return {pin[0]: pin[1] for pin in _pins() if len(pin) == 2}


def archived() -> dict[str, tuple[str, str, str]]:
    """The published raw files that only the archive holds: relative path (as a loose
    file would have it) -> (archive, member name, SHA-256 hex of the member)."""
    out = {}
    for pin in _pins():
        if len(pin) == 3:
            archive, member = pin[2].split(":", 1)
            out[pin[0]] = (archive, member, pin[1].removeprefix("sha256:"))
    return out


def _cache_dir() -> Path:
    return pinned.cache_dir("pastrami", PASTRAMI_COMMIT)


def locate(data_dir: str | os.PathLike | None = None, *, download: bool = True) -> Path:
    """Folder that holds the PASTRAMI raw files, fetching the published set if needed.

    Order: ``data_dir`` if given; else ``$ROUTERLAB_PASTRAMI_DIR``; else the pooch cache,
    downloading (pinned by commit and SHA-256) what is missing when ``download``. When
    only the archive cannot be downloaded, the folder is still returned (its loose files
    are all there) and the reason is logged; reading it then reads the loose files, and
    :func:`left_out` names the archive as missing.

    Raises
    ------
    DataUnavailable
        With a one-line explanation, when no copy is at hand and none can be fetched.
    """
    given = data_dir or os.environ.get(ENV_DIR)
    if given:
        p = Path(given).expanduser()
        if not p.is_dir() or not ((p / ARCHIVE).is_file() or any(p.rglob("*.txt"))):
            src = "data_dir" if data_dir else ENV_DIR
            raise DataUnavailable(f"PASTRAMI data: {src}={given} is not a folder with raw .txt files")
        return p
    reg = registry()
    cache = _cache_dir()
    missing = pinned.missing(reg, cache)
    if not missing:
        return cache
    if not download:
        raise DataUnavailable(f"PASTRAMI data: {len(missing)} of {len(reg)} files not cached in {cache} "
                              f"(run `routerlab fetch-pastrami`, or set {ENV_DIR})")
    try:
        fetch(cache=cache)
    except DataUnavailable as e:
        if pinned.missing(_loose(), cache):
            raise
        log.warning("%s", e)
    return cache


def fetch(cache: Path | None = None, progress: Progress = silent) -> Path:
    """Download the published PASTRAMI raw files and the archive into the cache (pinned,
    hash-checked). ``progress`` is told the files to fetch (0 of them done), then each as
    it arrives. The loose files come first: a loose file that fails stops the download;
    the archive failing leaves every loose file fetched.

    Raises
    ------
    DataUnavailable
        When a download fails (offline, the host does not answer, or the file is not the
        one pinned), in one line naming the file.
    """
    reg = registry()
    # the archive last: when only it fails, every loose file is already there to be read
    pins = {f: reg[f] for f in sorted(reg, key=lambda f: f == ARCHIVE)}
    return pinned.fetch(pins, PASTRAMI_URL, cache or _cache_dir(), what="PASTRAMI data",
                        where=f"netgroup/pastrami@{PASTRAMI_COMMIT[:7]}", env_dir=ENV_DIR, progress=progress)


def _loose() -> list[str]:
    """The loose raw files of the published set (the registry but the archive)."""
    return [f for f in registry() if f != ARCHIVE]


def _archive_problem(archive: Path) -> RouterlabError | None:
    """Why the archive in a folder cannot be read as the pinned one (its SHA-256
    differs), or None."""
    want = registry()[ARCHIVE].removeprefix("sha256:")
    try:
        got = pinned.sha256(archive)
    except OSError as e:
        return DataFormatError(archive, None, f"cannot read: {e.strerror or e}")
    if got != want:
        return DataFormatError(archive, None, f"SHA-256 {got} is not the {want} pinned for "
                               f"netgroup/pastrami@{PASTRAMI_COMMIT[:7]}: a damaged or other copy, "
                               "so the experiments only it holds are left out")
    return None


def _matches(path: str, pattern: str) -> bool:
    """Whether a path of the set matches ``pattern`` as ``Path.glob`` would match it below
    the folder ("**/" also stands for no folder at all)."""
    return PurePosixPath(path).match(pattern) or (pattern.startswith("**/") and PurePosixPath(path).match(pattern[3:]))


def raw_sources(folder, pattern: str = "**/*.txt") -> tuple[list, dict[str, RouterlabError]]:
    """The raw files of a folder, as :func:`read_dir` reads them.

    These are the loose files below ``folder`` that match ``pattern``, and, when the
    folder holds the archive (:data:`ARCHIVE`) and it is the pinned one, the files only
    the archive holds (:func:`archived`; a loose copy of one is read instead). A folder
    without the archive is read as the loose files it holds; what of the published set
    that leaves out is :func:`left_out`'s to say, not an error.

    Returns
    -------
    (list, dict)
        The files (:class:`pathlib.Path` or :class:`Member`), sorted by their path in the
        set; and what keeps a part of the set from being read, by file: the archive, when
        it is there but cannot be read or its SHA-256 differs.
    """
    folder = Path(folder)
    found = {f.relative_to(folder).parts: f for f in folder.glob(pattern)}
    problems: dict[str, RouterlabError] = {}
    pins = archived()
    archive = folder / ARCHIVE
    if pins and archive.is_file():
        problem = _archive_problem(archive)
        if problem is not None:
            problems[str(archive)] = problem
        else:
            for path, (_, member, sha) in pins.items():
                if _matches(path, pattern):
                    found.setdefault(PurePosixPath(path).parts, Member(archive, member, path, sha))
    return [found[k] for k in sorted(found)], problems


def left_out(folder, pattern: str = "**/*.txt") -> list[str]:
    """What of the published set reading ``folder`` leaves out although the folder is a
    copy of it, one line each: the folder holds every loose file of the set but not the
    archive, so the experiments only the archive holds (those ``pattern`` matches that
    have no loose copy here) are not read. Empty for any other folder (one's own files, a
    part of the set, the whole set). Partial data, not an error: the rest is read as ever.
    """
    folder = Path(folder)
    archive = folder / ARCHIVE
    if archive.is_file() or pinned.missing(_loose(), folder):
        return []
    absent = [p for p in archived() if _matches(p, pattern) and not (folder / p).is_file()]
    if not absent:
        return []
    return [f"PASTRAMI data: {archive} is missing, so the {len(absent)} experiments only it holds are left out "
            f"(`routerlab fetch-pastrami` downloads it and says why it could not)"]


def _experiment_id(folder: Path, source) -> str:
    """A file's experiment id in a folder: its path in the set without ``.txt``."""
    if isinstance(source, Member):
        return source.path.removesuffix(".txt")
    return str(source.relative_to(folder).with_suffix(""))


def read_folder(folder, pattern: str = "**/*.txt") -> tuple[pd.DataFrame | None, list[RouterlabError]]:
    """Read every raw file of ``folder`` (:func:`raw_sources`), keeping what cannot be read
    apart; the experiment id is the path in the set without ``.txt`` (e.g.
    ``bare-metal/run_30/clab_tb3_raw_30_...``).

    Returns
    -------
    (pandas.DataFrame or None, list)
        The trials of every readable file (None when there is none); and one error per file
        that could not be read (an archive that is not the pinned one, a malformed row),
        each naming the file (and the line). A copy of the set without its archive is no
        error: :func:`left_out` says what it leaves out.

    Raises
    ------
    DataUnavailable
        When the folder holds no raw file at all.
    """
    folder = Path(folder)
    sources, problems = raw_sources(folder, pattern)
    if not sources and not problems:
        raise DataUnavailable(f"PASTRAMI data: no raw .txt files below {folder}")
    trials, errors = read_files(sources, [_experiment_id(folder, f) for f in sources])
    return trials, list(problems.values()) + list(errors.values())


def raise_unread(errors: list[RouterlabError]) -> None:
    """Raise the first error of :func:`read_folder` (one line naming its file), if any."""
    if errors:
        raise errors[0]


def read_dir(folder, pattern: str = "**/*.txt") -> pd.DataFrame:
    """Read every raw file of ``folder`` (:func:`read_folder`), failing on the first that
    cannot be read, in one line naming it. What of the published set the folder leaves
    out (:func:`left_out`: a copy of its loose files without the archive) is logged as a
    warning, one line naming the archive, and the files that are there are returned."""
    trials, errors = read_folder(folder, pattern)
    raise_unread(errors)
    for note in left_out(folder, pattern):
        log.warning("%s", note)
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
