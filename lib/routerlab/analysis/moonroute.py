"""The MoonRoute authors' own measurements (emmericp/MoonRoute-data) and their figure scripts.

The repository holds, for each figure of the MoonRoute poster and thesis, the MoonGen logs
of the runs (``benchmark-scripts/<test>/analysis/run*``), the ``analyze.pl`` script that
turned them into space-separated tables (``data-used-for-plots/<figure>/data*``: x, then
one mean and standard-deviation pair per series, in wire-rate Mbit/s), and the gnuplot
(``plot``) and pgfplots (``<figure>.tex``) scripts that drew them. For 64-byte frames a
packet takes :data:`WIRE_BITS` bits on the wire (frame, preamble and gap), so
Mpps = Mbit/s / :data:`WIRE_BITS`.

This module reads them (:func:`read_table`, :func:`read_log`, :func:`read_runs`), derives
each table again from its log as ``analyze.pl`` did (:func:`derive`, :func:`check`), reads
which columns and labels the figure scripts plot (:func:`pgfplots_series`,
:func:`gnuplot_series`) and lists where scripts, tables and logs disagree
(:func:`disagreements`). The figures' data are :func:`cores`, :func:`batch` and
:func:`freq`, long-form, in Mpps.

The files are fetched on demand with pooch from the repository at :data:`COMMIT`, each
pinned by its own SHA-256 (``data/moonroute-registry.txt``; GitHub's archive of the commit
is not byte-stable, its files are), and cached; ``$ROUTERLAB_MOONROUTE_DIR`` names a local
copy instead: the repository's folder, or a ``.tar.gz`` archive of it. Every file read is
checked against its pinned SHA-256, whichever copy it comes from. The files are never part
of this repository.
"""

from __future__ import annotations

import functools
import os
import re
import tarfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from routerlab.analysis import pinned
from routerlab.errors import DataFormatError, DataUnavailable
from routerlab.progress import Progress, silent

#: Commit of emmericp/MoonRoute-data that the registry's hashes belong to (2017-01-31).
COMMIT = "51333dc648ca42f3740f6d09895e1ad4a9f67d69"
REPOSITORY = "emmericp/MoonRoute-data"
URL = f"https://raw.githubusercontent.com/{REPOSITORY}/{COMMIT}/"
ENV_DIR = "ROUTERLAB_MOONROUTE_DIR"
#: Bits a minimum-size (64-byte) Ethernet frame takes on the wire: the frame, its 8-byte
#: preamble and start delimiter, and the 12-byte inter-frame gap.
WIRE_BITS = (64 + 8 + 12) * 8
#: One 10 GbE port's rate (Mbit/s).
PORT_MBPS = 10_000
#: The router's 10 GbE ports in each figure's set-up, as its scripts draw the line rate.
PORTS = {"cores": 2, "batch": 1, "freq": 1}


@dataclass(frozen=True)
class Table:
    """One table a figure plots and the log ``analyze.pl`` derived it from.

    Attributes
    ----------
    figure : str
        ``cores``, ``batch`` or ``freq``.
    path : str
        The table, relative to the repository.
    log : str
        The MoonGen log (or, for ``freq``'s ``result_fine``, the table of runs) it came from.
    keys : tuple of str
        The log's labels, in its line prefix order (``cfg``, or ``input`` and ``output``).
    ddof : int
        The standard deviation's delta degrees of freedom in that ``analyze.pl``: 0
        (divides by n) or 1 (by n - 1).
    x_scale : float
        The table's x divided by the log's (1000 where the table gives MHz and the runs GHz).
    x_unit : str
        The unit of the table's x: ``cores``, ``packets`` (a batch size) or ``MHz``.
    """

    figure: str
    path: str
    log: str
    keys: tuple[str, ...] = ("cfg",)
    ddof: int = 0
    x_scale: float = 1.0
    x_unit: str = "cores"

    @property
    def name(self) -> str:
        return Path(self.path).name


_CORES = "benchmark-scripts/core_scaling_test/analysis/"
_FREQ2 = "benchmark-scripts/cpu_freq_scaling_2/analysis/"
#: The tables the figures plot, with their logs.
TABLES: tuple[Table, ...] = (
    *(Table("cores", f"data-used-for-plots/cores/data_{v}GHz", f"{_CORES}run_{v}GHz")
      for v in ("2.0", "2.0_random", "1.2", "1.2_random")),
    Table("batch", "data-used-for-plots/batch/data", "benchmark-scripts/input_batching/analysis/run",
          keys=("input", "output"), ddof=1, x_unit="packets"),
    *(Table("freq", f"data-used-for-plots/freq/data_{v}", f"{_FREQ2}run_{v}", ddof=1, x_unit="MHz")
      for v in ("no_random", "28_addr", "29_addr")),
    Table("freq", "data-used-for-plots/freq/result_fine", "benchmark-scripts/cpu_freq_scaling/results",
          keys=(), ddof=0, x_scale=1000.0, x_unit="MHz"),
)
#: A frequency unit of the tables' x, in GHz.
GHZ = {"MHz": 1e-3, "GHz": 1.0}
#: Each figure's scripts: the gnuplot file and the pgfplots file.
SCRIPTS = {fig: (f"data-used-for-plots/{fig}/plot", f"data-used-for-plots/{fig}/{fig}.tex")
           for fig in ("cores", "batch", "freq")}


# -- the files: pinned, fetched once, checked -------------------------------------------

def registry() -> dict[str, str]:
    """Relative path -> ``sha256:...`` of each file routerlab reads from the repository."""
    return {pin[0]: pin[1] for pin in pinned.registry_lines("moonroute-registry.txt")}


def _cache_dir() -> Path:
    return pinned.cache_dir("moonroute", COMMIT)


def _extract(archive: Path, into: Path) -> Path:
    """The registry's files from a ``.tar.gz`` of the repository (its top folder
    stripped), written under ``into``."""
    wanted = registry()
    try:
        with tarfile.open(archive) as tar:
            for member in tar.getmembers():
                rel = member.name.split("/", 1)[-1]
                if rel in wanted and member.isfile():
                    dest = into / rel
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    part = dest.with_name(dest.name + f".part{os.getpid()}")
                    part.write_bytes(tar.extractfile(member).read())
                    part.replace(dest)
    except (OSError, tarfile.TarError) as e:
        raise DataUnavailable(f"MoonRoute data: {archive}: not a readable .tar.gz ({e})") from None
    return into


def locate(data_dir: str | os.PathLike | None = None, *, download: bool = True) -> Path:
    """Folder holding the MoonRoute authors' files, fetching them if needed.

    Order: ``data_dir`` if given; else ``$ROUTERLAB_MOONROUTE_DIR``; else the pooch cache,
    downloading what is missing when ``download``. A copy is the repository's folder, a
    folder holding it, a ``.tar.gz`` of it (GitHub's archive of :data:`COMMIT`), or a
    folder holding that archive under GitHub's name for it; an archive's pinned files are
    unpacked into the cache. The files' hashes are checked as they are read (:func:`path`).

    Raises
    ------
    DataUnavailable
        In one line, when no copy is at hand and none can be fetched.
    """
    given = data_dir or os.environ.get(ENV_DIR)
    if given:
        p = Path(given).expanduser()
        src = "data_dir" if data_dir else ENV_DIR
        if p.is_file() and p.name.endswith((".tar.gz", ".tgz")):
            return _extract(p, _cache_dir().with_name(_cache_dir().name + "-archive"))
        if not p.is_dir():
            raise DataUnavailable(f"MoonRoute data: {src}={given} is neither a folder nor a .tar.gz")
        if (p / "data-used-for-plots").is_dir():
            return p
        # a folder holding the repository's folder, or its archive at the pinned commit
        inner = [c for c in p.glob("MoonRoute-data-*") if c.is_dir()]
        if len(inner) == 1:
            return inner[0]
        archive = p / f"MoonRoute-data-{COMMIT}.tar.gz"
        if archive.is_file():
            return _extract(archive, _cache_dir().with_name(_cache_dir().name + "-archive"))
        raise DataUnavailable(f"MoonRoute data: {src}={given} holds neither data-used-for-plots/ nor "
                              f"MoonRoute-data-{COMMIT}.tar.gz")
    cache = _cache_dir()
    missing = pinned.missing(registry(), cache)
    if missing and not download:
        raise DataUnavailable(f"MoonRoute data: {len(missing)} files not cached in {cache} (set {ENV_DIR})")
    if missing:
        fetch(cache)
    return cache


def fetch(cache: Path | None = None, progress: Progress = silent) -> Path:
    """Download the registry's files from :data:`REPOSITORY` at :data:`COMMIT` into the
    cache, each checked against its SHA-256.

    Raises
    ------
    DataUnavailable
        When a download fails, or a file's SHA-256 is not the pinned one, in one line
        naming the file.
    """
    return pinned.fetch(registry(), URL, cache or _cache_dir(), what="MoonRoute data",
                        where=f"{REPOSITORY}@{COMMIT[:12]}", env_dir=ENV_DIR, progress=progress)


def path(folder, rel: str) -> Path:
    """The file ``rel`` of the copy in ``folder``, checked against its pinned SHA-256.

    Raises
    ------
    DataUnavailable
        The file is missing, or its SHA-256 is not the pinned one (one line naming it).
    """
    p = Path(folder) / rel
    want = registry().get(rel)
    if want is None:
        raise DataUnavailable(f"MoonRoute data: {rel} is not pinned in data/moonroute-registry.txt")
    if not p.is_file():
        raise DataUnavailable(f"MoonRoute data: {p} is missing (a copy of {REPOSITORY}@{COMMIT[:12]}?)")
    got = "sha256:" + pinned.sha256(p)
    if got != want:
        raise DataUnavailable(f"MoonRoute data: {p}: SHA-256 {got[7:19]}... differs from the pinned "
                              f"{want[7:19]}... ({REPOSITORY}@{COMMIT[:12]})")
    return p


# -- readers ------------------------------------------------------------------------------

def read_table(file, *, source: str | None = None) -> pd.DataFrame:
    """One of the authors' data tables: long form, one row per x and series.

    A line is x, then one (mean, standard deviation) pair per series, separated by spaces;
    every line has as many fields as the first.

    Returns
    -------
    pandas.DataFrame
        ``x``, ``series`` (0 for the first pair), ``mean_mbps``, ``sd_mbps`` (wire-rate
        Mbit/s), ``sd_text`` (the deviation as written), ``line`` (1-based).

    Raises
    ------
    DataFormatError
        Naming the file and line of the first malformed row.
    """
    source = source or str(file)
    rows, width = [], None
    for n, text in enumerate(Path(file).read_text(errors="replace").splitlines(), 1):
        fields = text.split()
        if not fields:
            continue
        if len(fields) < 3 or len(fields) % 2 == 0:
            raise DataFormatError(source, n, f"{len(fields)} fields; a row is x then (mean, sd) pairs")
        if width is not None and len(fields) != width:
            raise DataFormatError(source, n, f"{len(fields)} fields where the first row has {width}")
        width = len(fields)
        try:
            values = [float(f) for f in fields]
        except ValueError:
            bad = next(f for f in fields if not re.fullmatch(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?", f))
            raise DataFormatError(source, n, f"{bad!r} is not a number") from None
        for s in range(len(fields) // 2):
            rows.append({"x": values[0], "series": s, "mean_mbps": values[1 + 2 * s],
                         "sd_mbps": values[2 + 2 * s], "sd_text": fields[2 + 2 * s], "line": n})
    if not rows:
        raise DataFormatError(source, None, "no rows")
    return pd.DataFrame(rows)


#: A MoonGen counter line: ``[<label>_run_<n>_<port>] ... <rate> MBit/s wire rate.``
_LOG_LINE = re.compile(r"^\[(?P<label>\S*?)_run_(?P<run>\d+)_(?P<port>\S*)\] .* (?P<rate>\S+) MBit/s wire rate\.$")


def read_log(file, keys: tuple[str, ...] = ("cfg",), *, source: str | None = None) -> pd.DataFrame:
    """A MoonGen log as ``analyze.pl`` reads it: one row per counter line.

    A line's label is ``<key>_<value>_...`` for each of ``keys`` (``cfg_3``,
    ``input_128_output_8``), then ``_run_<n>_<port>``; its rate is the wire rate in Mbit/s.

    Returns
    -------
    pandas.DataFrame
        One column per key (float), ``run``, ``port``, ``wire_mbps``, ``line``.

    Raises
    ------
    DataFormatError
        Naming the file and line of the first line that is not such a counter line
        (``analyze.pl`` would silently count the previous line's rate again).
    """
    source = source or str(file)
    label = re.compile("^" + "_".join(rf"{k}_(\d+)" for k in keys) + "$")
    rows = []
    for n, text in enumerate(Path(file).read_text(errors="replace").splitlines(), 1):
        if not text.strip():
            continue
        m = _LOG_LINE.match(text.rstrip())
        lab = m and label.match(m["label"])
        if not m or not lab:
            raise DataFormatError(source, n, f"not a MoonGen counter line [{'_'.join(k + '_N' for k in keys)}"
                                  "_run_N_PORT] ... R MBit/s wire rate.")
        try:
            rate = float(m["rate"])
        except ValueError:
            raise DataFormatError(source, n, f"wire rate {m['rate']!r} is not a number") from None
        rows.append({**{k: float(v) for k, v in zip(keys, lab.groups())}, "run": int(m["run"]),
                     "port": m["port"], "wire_mbps": rate, "line": n})
    if not rows:
        raise DataFormatError(source, None, "no counter lines")
    return pd.DataFrame(rows)


def read_runs(file, *, source: str | None = None) -> pd.DataFrame:
    """A table of runs (``cpu_freq_scaling/results``): x, then one Mbit/s value per run.

    Returns
    -------
    pandas.DataFrame
        ``x``, ``run`` (1-based), ``wire_mbps``, ``line``.

    Raises
    ------
    DataFormatError
        Naming the file and line of the first malformed row.
    """
    source = source or str(file)
    rows = []
    for n, text in enumerate(Path(file).read_text(errors="replace").splitlines(), 1):
        fields = text.split()
        if not fields:
            continue
        try:
            values = [float(f) for f in fields]
        except ValueError:
            raise DataFormatError(source, n, "a field is not a number") from None
        if len(values) < 2:
            raise DataFormatError(source, n, "x and no run")
        rows += [{"x": values[0], "run": i, "wire_mbps": v, "line": n} for i, v in enumerate(values[1:], 1)]
    if not rows:
        raise DataFormatError(source, None, "no rows")
    return pd.DataFrame(rows)


# -- the derivation: analyze.pl again -----------------------------------------------------

def derive(log: pd.DataFrame, keys: tuple[str, ...], ddof: int) -> pd.DataFrame:
    """Mean and standard deviation per key, as ``analyze.pl`` computes them: rates of at
    most 1 Mbit/s dropped, each run's ports summed, then the mean over runs and the
    deviation with ``ddof`` (0: divided by n, 1: by n - 1).

    Returns
    -------
    pandas.DataFrame
        The keys, ``runs``, ``mean_mbps``, ``sd_mbps``.
    """
    kept = log[log["wire_mbps"] > 1]
    per_run = kept.groupby([*keys, "run"], as_index=False)["wire_mbps"].sum()
    g = per_run.groupby(list(keys))["wire_mbps"]
    out = pd.DataFrame({"runs": g.size(), "mean_mbps": g.mean(), "sd_mbps": g.std(ddof=ddof)}).reset_index()
    return out


def _glued(text: str, x: float, derived: float) -> bool:
    """Whether a deviation as written (not its row's last) is the deviation ``derived``
    from the runs with the row's ``x`` written after it: ``analyze.pl`` for the batch test
    prints ``"$input $avg $drv"`` for each series with no separator between them."""
    tail = f"{x:g}"
    if not text.endswith(tail) or len(text) <= len(tail):
        return False
    try:
        return _same(float(text[:-len(tail)]), derived)
    except ValueError:
        return False


def _same(a: float, b: float, rel: float = 1e-12) -> bool:
    return bool(np.isclose(a, b, rtol=rel, atol=1e-9))


def check(folder, table: Table) -> pd.DataFrame:
    """A table set against its derivation from the log, cell by cell.

    Returns
    -------
    pandas.DataFrame
        The table's rows (:func:`read_table`) with ``series_label`` (what the series is,
        from the log: the TX batch size for ``batch``), ``runs``, ``log_mean_mbps``,
        ``log_sd_mbps``, and ``mean_agrees``, ``sd_agrees`` (to the 15 digits Perl prints).
    """
    folder = Path(folder).resolve()
    # the figures, their notes and the disagreements each check every table: read and
    # hashed once per process while the two files stay as they were
    stamps = tuple((f.stat().st_mtime_ns, f.stat().st_size) if f.is_file() else None
                   for f in (folder / table.path, folder / table.log))
    return _checked(folder, table, stamps).copy()


@functools.lru_cache(maxsize=32)
def _checked(folder: Path, table: Table, stamps: tuple) -> pd.DataFrame:
    """:func:`check`'s work, for one state (``stamps``) of the table's two files."""
    t = read_table(path(folder, table.path), source=table.path)
    if table.log.endswith("results"):
        runs = read_runs(path(folder, table.log), source=table.log)
        d = derive(runs.assign(x=(runs["x"] * table.x_scale).round(6)), ("x",), table.ddof)
        merged = t.merge(d, on="x", how="left", suffixes=("", "_log"))
        merged["series_label"] = ""
    elif table.keys == ("cfg",):
        log = read_log(path(folder, table.log), ("cfg",), source=table.log)
        d = derive(log, ("cfg",), table.ddof).rename(columns={"cfg": "x"})
        merged = t.merge(d, on="x", how="left", suffixes=("", "_log"))
        merged["series_label"] = ""
    else:
        log = read_log(path(folder, table.log), table.keys, source=table.log)
        d = derive(log, table.keys, table.ddof)
        # analyze.pl prints each input's outputs in numeric order: the series' order
        outputs = sorted(d["output"].unique())
        d["series"] = d["output"].map({o: i for i, o in enumerate(outputs)})
        merged = t.merge(d.rename(columns={"input": "x"}), on=["x", "series"], how="left", suffixes=("", "_log"))
        merged["series_label"] = merged["output"].map(lambda o: f"TxB {o:g}" if pd.notna(o) else "")
    merged = merged.rename(columns={"mean_mbps_log": "log_mean_mbps", "sd_mbps_log": "log_sd_mbps"})
    merged["mean_agrees"] = [_same(a, b) for a, b in zip(merged["mean_mbps"], merged["log_mean_mbps"])]
    merged["sd_agrees"] = [_same(a, b) for a, b in zip(merged["sd_mbps"], merged["log_sd_mbps"])]
    merged["table"] = table.path
    return merged


# -- the figure scripts ---------------------------------------------------------------------

@dataclass(frozen=True)
class Series:
    """One series a figure script plots: the table, its y and error columns (0-based),
    its label, and the script and line that say so."""

    script: str
    line: int
    table: str
    y: int
    err: int | None
    label: str


def _lineno(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def pgfplots_series(folder, rel: str) -> tuple[list[Series], list[tuple[int, float, float, float, bool]]]:
    """The series a pgfplots figure plots from tables, and the straight lines typed into it.

    Returns
    -------
    (list of Series, list of (line, xshift, slope, intercept, per_wire_bits))
        The lines are ``\\addplot[domain=...,xshift=k*\\barwidth,...]{(a*x+b)/(84*8)}`` or
        ``{a*x+b}``: ``xshift`` is k (which bar the line sits on), ``per_wire_bits`` whether
        the expression divides by the wire bits (Mbit/s coefficients) or not (Mpps).
    """
    text = path(folder, rel).read_text(errors="replace")
    body = "\n".join(line if not line.lstrip().startswith("%") else "" for line in text.splitlines())
    tables = {m[2]: Path(m[1]).name for m in re.finditer(r"\\pgfplotstableread\[[^\]]*\]\{([^}]*)\}\{\\(\w+)\}", body)}
    legend = re.search(r"legend entries=\{(.*)\},?\s*$", body, re.M)
    labels = [s.strip().replace("\\,", " ").replace("~", " ") for s in re.split(r",\s*(?![^{]*\})", legend[1])] \
        if legend else []
    series = []
    for m in re.finditer(r"\\addplot\[.*?\]\s*table\s*\[(.*?)\]\s*\{\\(\w+)\}", body, re.S):
        y = re.search(r"y expr\s*=\s*\\thisrowno\{(\d+)\}", m[1])
        e = re.search(r"y error expr\s*=\s*\\thisrowno\{(\d+)\}", m[1])
        label = labels[len(series)] if len(series) < len(labels) else ""
        series.append(Series(rel, _lineno(body, m.start()), tables.get(m[2], m[2]), int(y[1]),
                             int(e[1]) if e else None, label))
    lines = []
    for m in re.finditer(r"\\addplot\[domain=[^\]]*?xshift=([-\d.]*)\*?\\barwidth[^\]]*\]"
                         r"\{\(?\s*([-\d.]+)\*x\s*([-+]\s*[\d.]+)\)?(\s*/\s*\(84\s*\*\s*8\))?\}", body):
        k = float(m[1]) if m[1] not in ("", "-") else (-1.0 if m[1] == "-" else 1.0)
        lines.append((_lineno(body, m.start()), k, float(m[2]), float(m[3].replace(" ", "")), bool(m[4])))
    return series, lines


def gnuplot_series(folder, rel: str) -> tuple[list[Series], list[tuple[int, str, float, float, float]]]:
    """The series a gnuplot script plots from tables (its ``plot`` command), and its fits.

    Returns
    -------
    (list of Series, list of (line, table, x_from, x_to, x_divisor))
        A fit ``fit [a:b] g(x) 'table' using 1:2:3`` (or ``($1/1000):2:3``: divisor 1000)
        weights each point by 1/sd².
    """
    text = path(folder, rel).read_text(errors="replace")
    names = {m[1]: m[2] for m in re.finditer(r"^(\w+)\s*=\s*'([^']*)'", text, re.M)}
    series, fits = [], []
    plot = re.search(r"^plot\s*\\?\n", text, re.M)
    if plot:
        start = plot.end()
        for n, line in enumerate(text[start:].splitlines(), _lineno(text, start)):
            if line.lstrip().startswith("#") or not line.strip():
                break
            m = re.match(r"\s*(?:'([^']+)'|(\w+))\s+using\s+(\S+).*?title\s+\"([^\"]*)\"", line)
            if m:
                cols = [re.findall(r"\$(\d+)", part) or [part] for part in m[3].split(":")]
                y = int(cols[1][0]) - 1 if len(cols) > 1 and cols[1][0].isdigit() else None
                e = int(cols[2][0]) - 1 if len(cols) > 2 and cols[2][0].isdigit() else None
                table = m[1] or names.get(m[2], m[2])
                if y is not None:
                    series.append(Series(rel, n, table, y, e, m[4]))
            if not line.rstrip().endswith("\\"):
                break
    for m in re.finditer(r"^fit \[([-\d.]+):([-\d.]+)\] \w+\(x\) (?:'([^']+)'|(\w+)) using "
                         r"(?:1|\(\$1/(\d+)\)):2:3", text, re.M):
        fits.append((_lineno(text, m.start()), m[3] or names.get(m[4], m[4]), float(m[1]), float(m[2]),
                     float(m[5] or 1)))
    return series, fits


def fit_line(t: pd.DataFrame, x_from: float, x_to: float, x_divisor: float = 1.0) -> tuple[float, float]:
    """Slope and intercept (Mbit/s per unit of the table's x, Mbit/s) of a straight line
    fitted as gnuplot's ``fit`` does with a third ``using`` column: least squares weighted
    by 1/sd², over the rows whose x / ``x_divisor`` is in [x_from, x_to]."""
    d = t[(t["series"] == 0) & (t["x"] / x_divisor).between(x_from, x_to)]
    if len(d) < 2:
        return float("nan"), float("nan")
    slope, intercept = np.polyfit(d["x"], d["mean_mbps"], 1, w=1 / d["sd_mbps"])
    return float(slope), float(intercept)


def _digits(value: float) -> int:
    """Significant digits of a number as typed."""
    s = repr(value).lstrip("-").replace(".", "").lstrip("0").split("e")[0]
    return max(1, len(s.rstrip("0")) or 1)


# -- the disagreements -------------------------------------------------------------------------

def disagreements(folder) -> pd.DataFrame:
    """Every place where a figure's scripts, its tables and its logs disagree.

    Returns
    -------
    pandas.DataFrame
        One row each: ``figure``, ``where`` (file:line), ``what``, ``written`` (what the
        file says), ``found`` (what the tables or logs give), ``routerlab_draws`` (and
        why). Numbers are read from the files, never typed here.
    """
    rows = []
    for table in TABLES:
        c = check(folder, table)
        for r in c[~c["mean_agrees"]].itertuples():
            rows.append({"figure": table.figure, "where": f"{table.path}:{r.line}",
                         "what": f"mean at x={r.x:g}{' ' + r.series_label if r.series_label else ''}",
                         "written": f"{r.mean_mbps:.10g} Mbit/s",
                         "found": f"{r.log_mean_mbps:.10g} Mbit/s from {r.runs:g} runs of {Path(table.log).name}",
                         "routerlab_draws": "the table's value (the figure's own data)"})
        bad_sd = c[~c["sd_agrees"] & c["mean_agrees"]]
        last = c["series"].max()
        glued = c[[k < last and _glued(s, x, v) for k, s, x, v in zip(c["series"], c["sd_text"], c["x"], c["log_sd_mbps"])]]
        if len(glued):
            rel = ((glued["sd_mbps"] - glued["log_sd_mbps"]).abs() / glued["log_sd_mbps"]).max()
            first = glued.iloc[0]
            rows.append({"figure": table.figure, "where": f"{table.path}:{int(first.line)}",
                         "what": f"{len(glued)} of {len(c)} standard deviations end with the row's x "
                                 "(analyze.pl prints \"$input $avg $drv\" with no separator)",
                         "written": f"e.g. {first.sd_text} at x={first.x:g}, {first.series_label}",
                         "found": f"{first.log_sd_mbps:.15g} from the runs; no value moves by more than "
                                  f"{rel:.1e} of itself",
                         "routerlab_draws": "the deviation recomputed from the log"})
        for r in bad_sd[~bad_sd.index.isin(glued.index)].itertuples():
            rows.append({"figure": table.figure, "where": f"{table.path}:{r.line}",
                         "what": f"standard deviation at x={r.x:g}{' ' + r.series_label if r.series_label else ''}",
                         "written": f"{r.sd_mbps:.10g} Mbit/s",
                         "found": f"{r.log_sd_mbps:.10g} Mbit/s from {r.runs:g} runs (ddof {table.ddof})",
                         "routerlab_draws": "the table's value"})
        if table.x_scale != 1:
            rows.append({"figure": table.figure, "where": f"{table.path}:1",
                         "what": "x unit", "written": f"x={c['x'].iloc[0]:g} (MHz)",
                         "found": f"x={c['x'].iloc[0] / table.x_scale:g} (GHz) in {Path(table.log).name}",
                         "routerlab_draws": "GHz"})
    rows += _script_disagreements(folder)
    return pd.DataFrame(rows, columns=["figure", "where", "what", "written", "found", "routerlab_draws"])


def _layout_labels(folder) -> dict[tuple[str, int], str]:
    """(table name, mean column) -> what that column is, from the logs."""
    out = {}
    for table in TABLES:
        c = check(folder, table)
        for r in c.drop_duplicates("series").itertuples():
            out[(table.name, 1 + 2 * r.series)] = r.series_label or _series_name(table)
    return out


def _series_name(table: Table) -> str:
    stem = table.name.removeprefix("data_").removesuffix("GHz")
    if table.figure == "cores":
        ghz, _, kind = stem.partition("_")
        return f"{ghz} GHz {'random' if kind else 'single'}"
    if table.figure == "freq":
        m = re.fullmatch(r"(\d+)_addr", stem)
        return f"{m[1]} bit rnd. dst. IPs (file name)" if m else {"no_random": "single dst. IP"}.get(stem, stem)
    return stem


def _script_disagreements(folder) -> list[dict]:
    rows = []
    layout = _layout_labels(folder)
    for figure, (gp, tex) in SCRIPTS.items():
        gseries, fits = gnuplot_series(folder, gp)
        pseries, lines = pgfplots_series(folder, tex)
        glabel = {(s.table, s.y): s for s in gseries}
        for s in pseries:
            meaning = layout.get((s.table, s.y), "")
            same_label = [g for g in gseries if g.table == s.table and g.label == s.label]
            if s.err is not None and s.err != s.y + 1:
                rows.append({"figure": figure, "where": f"{tex}:{s.line}", "what": f"error column of {s.label!r}",
                             "written": f"column {s.err}", "found": f"the mean is column {s.y}",
                             "routerlab_draws": f"column {s.y + 1}"})
            g = glabel.get((s.table, s.y))
            if figure == "batch" and meaning and not meaning.endswith(s.label.split()[-1]) or \
                    (same_label and same_label[0].y != s.y):
                other = same_label[0] if same_label else None
                rows.append({"figure": figure, "where": f"{tex}:{s.line}",
                             "what": f"{s.label!r} drawn from {s.table} columns {s.y}-{s.y + 1} (0-based)",
                             "written": s.label,
                             "found": f"those columns are {meaning or '?'} (the log's order)"
                                      + (f"; {gp}:{other.line} draws {s.label!r} from columns "
                                         f"{other.y}-{other.y + 1}, {layout.get((s.table, other.y), '?')}"
                                         if other else ""),
                             "routerlab_draws": f"{s.label} from columns {other.y}-{other.y + 1}, as the log "
                                                "lays them out" if other else meaning})
            if figure == "freq" and "(file name)" in meaning and meaning.split()[0] not in s.label:
                rows.append({"figure": figure, "where": f"{tex}:{s.line}", "what": f"label of {s.table}",
                             "written": s.label + (f" (and {gp}:{g.line})" if g and g.label == s.label else ""),
                             "found": f"{s.table} and its log are named {meaning.split()[0]}_addr (load.lua "
                                      "draws destinations as random() * 2^width)",
                             "routerlab_draws": f"{s.table} labelled by its file name"})
        gfit = {tname: (gline, x0, x1, div) for gline, tname, x0, x1, div in fits}
        for fline, k, slope, intercept, per_bits in lines:
            i = round(k + (len(pseries) - 1) / 2)
            if not 0 <= i < len(pseries):
                continue
            tname = pseries[i].table
            if tname not in gfit:
                rows.append({"figure": figure, "where": f"{tex}:{fline}", "what": f"typed line on {tname}'s bars",
                             "written": f"{slope:g}*x{intercept:+g}", "found": f"{gp} fits no line to {tname}",
                             "routerlab_draws": "no fitted line"})
                continue
            gline, x0, x1, div = gfit[tname]
            t = read_table(path(folder, next(tb.path for tb in TABLES if tb.name == tname and tb.figure == figure)),
                           source=tname)
            m, b = fit_line(t, x0, x1, div)
            if np.isnan(m):
                meant = 1000.0 if t["x"].max() > 100 * x1 else div
                rows.append({"figure": figure, "where": f"{gp}:{gline}", "what": f"fit range of {tname}",
                             "written": f"[{x0:g}:{x1:g}] on x as written",
                             "found": f"{tname}'s x runs {t['x'].min():g}-{t['x'].max():g}: no point in range "
                                      f"(compared below as x/{meant:g})",
                             "routerlab_draws": "no fitted line"})
                m, b = fit_line(t, x0, x1, meant)
            if not per_bits:
                m, b = m / WIRE_BITS, b / WIRE_BITS
            agree = all(_same(typed, float(f"{got:.{_digits(typed)}g}"), 1e-9)
                        for typed, got in ((slope, m), (intercept, b)))
            if not agree:
                unit = "Mbit/s" if per_bits else "Mpps"
                rows.append({"figure": figure, "where": f"{tex}:{fline}", "what": f"typed line on {tname}'s bars ({unit})",
                             "written": f"{slope:g}*x{intercept:+g}",
                             "found": f"{m:.6g}*x{b:+.6g}, fitted to {tname} as {gp}:{gline} does",
                             "routerlab_draws": "no fitted line (the bars and their deviations only)"})
    return rows


# -- the figures' data ----------------------------------------------------------------------------

def _mpps(c: pd.DataFrame, sd: str = "sd_mbps") -> pd.DataFrame:
    return c.assign(mpps=c["mean_mbps"] / WIRE_BITS, sd_mpps=c[sd] / WIRE_BITS)


def cores(folder) -> pd.DataFrame:
    """The core-scaling figure's data: ``cores``, ``series`` (e.g. ``2.0 GHz single``),
    ``mpps`` and ``sd_mpps`` (the authors' deviation over runs, divided by n), with
    ``runs``, from the tables (checked against their logs)."""
    out = []
    for t in (t for t in TABLES if t.figure == "cores"):
        c = _mpps(check(folder, t))
        out.append(c.assign(cores=c["x"].astype(int), series=_series_name(t)))
    return pd.concat(out, ignore_index=True)[["cores", "series", "mpps", "sd_mpps", "runs", "table"]]


def batch(folder) -> pd.DataFrame:
    """The batch-size figure's data: ``rx_batch`` (packets), ``tx_batch`` (packets, from
    the log's layout), ``mpps``, ``sd_mpps`` (recomputed from the runs, divided by n - 1:
    the table's deviations carry the row's x), ``runs``."""
    t = next(t for t in TABLES if t.figure == "batch")
    c = _mpps(check(folder, t), sd="log_sd_mbps")
    c = c.assign(rx_batch=c["x"].astype(int), tx_batch=c["output"].astype(int))
    return c[["rx_batch", "tx_batch", "mpps", "sd_mpps", "runs", "table"]]


def batch_series(folder) -> list[int]:
    """The TX batch sizes the gnuplot script ``batch/plot`` draws, as the log lays out the
    columns it names (packets)."""
    layout = _layout_labels(folder)
    series, _ = gnuplot_series(folder, SCRIPTS["batch"][0])
    return [int(layout[(s.table, s.y)].split()[-1]) for s in series if (s.table, s.y) in layout]


def freq(folder) -> pd.DataFrame:
    """The CPU-frequency figure's data: ``ghz`` (each table's x converted from the unit it
    records, :attr:`Table.x_unit`), ``series`` (by file name), ``mpps``, ``sd_mpps`` (as
    the tables give it), ``runs``."""
    out = []
    labels = {s.table: s.label for s in pgfplots_series(folder, SCRIPTS["freq"][1])[0]}
    for t in (t for t in TABLES if t.figure == "freq"):
        c = _mpps(check(folder, t))
        ghz = c["x"] * GHZ[t.x_unit]
        # a file named for its random bits is labelled by that name; result_fine, by the authors' label
        name = f"{labels[t.name]} (authors' label)" if t.name == "result_fine" else _series_name(t)
        out.append(c.assign(ghz=ghz.round(3), series=name))
    return pd.concat(out, ignore_index=True)[["ghz", "series", "mpps", "sd_mpps", "runs", "table"]]


def line_rate_mpps(ports: int = 1) -> float:
    """Line rate of ``ports`` 10 GbE ports for 64-byte frames (Mpps)."""
    return ports * PORT_MBPS / WIRE_BITS


def checks(folder) -> pd.DataFrame:
    """What :func:`disagreements` checked, per figure: table cells set against the logs
    (means and deviations), series of the figure scripts set against the tables' layout,
    straight lines typed into the pgfplots scripts set against the gnuplot fits; and how
    many disagreements it found there."""
    found = disagreements(folder)
    rows = []
    for figure, (gp, tex) in SCRIPTS.items():
        cells = sum(len(check(folder, t)) for t in TABLES if t.figure == figure)
        pseries, lines = pgfplots_series(folder, tex)
        gseries, _ = gnuplot_series(folder, gp)
        rows.append({"figure": figure, "tables": sum(t.figure == figure for t in TABLES),
                     "cells_checked_against_logs": cells, "script_series": len(pseries) + len(gseries),
                     "typed_lines": len(lines), "disagreements": int((found["figure"] == figure).sum())})
    return pd.DataFrame(rows)


def best(df: pd.DataFrame, by: str, x: str) -> pd.DataFrame:
    """Per value of ``by``, the ``x`` at which ``mpps`` is highest, with that Mpps."""
    i = df.groupby(by)["mpps"].idxmax()
    return df.loc[i, [by, x, "mpps", "sd_mpps"]].reset_index(drop=True)
