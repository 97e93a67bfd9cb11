"""Running the project's notebooks with papermill (the ``routerlab figures`` job), and
what their first cells say (the Colab install, the badge, the citations).

Every notebook in ``notebooks/`` has a cell tagged ``parameters`` with typed defaults,
among them ``mode`` ("replay" or "measure") and ``out_dir`` (where figures are saved).
``routerlab figures`` always replays. A notebook whose data is not at hand raises
:class:`routerlab.errors.DataUnavailable`; it is then reported as skipped, in one line.
"""

from __future__ import annotations

import json
import os
import re
import time
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from routerlab.version import project_dir
from routerlab.errors import ParameterError, RouterlabError
from routerlab.version import release, repo_root


@dataclass
class RunResult:
    """Outcome of one notebook run.

    Attributes
    ----------
    name : str
        Notebook stem.
    status : {"ok", "failed", "skipped"}
        ``skipped`` when the notebook's data was unavailable.
    message : str
        One line: what failed, or why it was skipped.
    seconds : float
        Wall time of the run.
    output : pathlib.Path
        The executed notebook.
    """

    name: str
    status: str
    message: str
    seconds: float
    output: Path


def repository_url() -> str:
    """The project's repository address, from the package metadata (pyproject.toml)."""
    for entry in metadata.metadata("routerlab").get_all("Project-URL") or []:
        label, _, url = entry.partition(",")
        if label.strip() == "Repository":
            return url.strip()
    raise RouterlabError("pyproject.toml has no [project.urls] Repository")


def bootstrap_source(version: str | None = None) -> str:
    """Source of every notebook's first cell: in Colab (or any kernel without routerlab)
    it installs the package from the project's repository at the tag of the release the
    figures were made with (``v`` + ``version``, default :func:`routerlab.version.release`),
    not the moving default branch."""
    return (
        "# In Colab, or any kernel without routerlab: install the routerlab release of this notebook.\n"
        "try:\n"
        "    import routerlab\n"
        "except ImportError:\n"
        f'    %pip install -q "routerlab @ git+{repository_url()}@v{version or release()}"\n'
        "    import routerlab"
    )


def _write_lines(cell: dict, text: str):
    lines = text.split("\n")
    cell["source"] = [line + "\n" for line in lines[:-1]] + [lines[-1]]


def refresh_bootstrap(path: Path, version: str | None = None) -> bool:
    """Rewrite what notebook ``path`` says of its release (``version``, default
    :func:`routerlab.version.release`): its first cell as :func:`bootstrap_source` gives it,
    and the Colab badge heading its first markdown cell as :func:`colab_badge` does, so
    that Colab opens the notebook of the release the cell installs. True if it changed.
    The notebook is written back as it was read otherwise (same JSON layout), so that the
    change is the only difference. ``scripts/release.py prepare`` runs it on every notebook.

    Raises
    ------
    RouterlabError
        When the first cell is not a code cell (it would be some other cell's text lost),
        or there is no markdown cell for the badge.
    """
    path = Path(path)
    nb = json.loads(path.read_text())
    cell = nb["cells"][0] if nb.get("cells") else None
    if cell is None or cell["cell_type"] != "code":
        raise RouterlabError(f"{path}: the first cell must be the code cell that installs routerlab")
    md = next((c for c in nb["cells"] if c["cell_type"] == "markdown"), None)
    if md is None:
        raise RouterlabError(f"{path}: no markdown cell to head with the Colab badge")
    changed = False
    for c, new in ((cell, bootstrap_source(version)), (md, with_badge("".join(md["source"]), path.stem, version))):
        if "".join(c["source"]) != new:
            _write_lines(c, new)
            changed = True
    if changed:
        path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
    return changed


def colab_url(name: str, version: str | None = None) -> str:
    """Where Colab opens notebook ``name`` (a stem): the project's repository at the tag of
    the release the notebook's first cell installs (``v`` + ``version``, default
    :func:`routerlab.version.release`), so that the notebook and the code it installs are
    the same release."""
    repo = repository_url().removeprefix("https://github.com/").removesuffix(".git")
    return f"https://colab.research.google.com/github/{repo}/blob/v{version or release()}/notebooks/{name}.ipynb"


#: A Colab link to a notebook of a GitHub repository, at any branch or tag: group 1 the
#: ref, group 2 the notebook's stem.
COLAB_LINK = re.compile(r"https://colab\.research\.google\.com/github/[^/\s)]+/[^/\s)]+/blob/([^/\s)]+)"
                        r"/notebooks/([^/\s)]+)\.ipynb")

#: The "Open in Colab" badge, at whatever address.
COLAB_BADGE = re.compile(r"\[!\[Open in Colab\]\([^)\s]*\)\]\(" + COLAB_LINK.pattern + r"\)")


def colab_badge(name: str, version: str | None = None) -> str:
    """The "Open in Colab" link that heads a notebook's first markdown cell."""
    return f"[![Open in Colab](https://colab.research.google.com/assets/colab-badge.svg)]({colab_url(name, version)})"


def with_badge(markdown: str, name: str, version: str | None = None) -> str:
    """A notebook's first markdown cell ``markdown`` headed by its current Colab badge
    (:func:`colab_badge`): an old one (another release's, another address) replaced, else
    one put first."""
    badge = colab_badge(name, version)
    found = COLAB_BADGE.search(markdown)
    if found is None:
        return f"{badge}\n\n{markdown}"
    return markdown[:found.start()] + badge + markdown[found.end():]


def with_colab_links(text: str, version: str | None = None) -> str:
    """``text`` (Markdown) with every Colab link to a notebook made :func:`colab_url`'s:
    how a hand-written page (docs/notebooks.md) follows a release."""
    return COLAB_LINK.sub(lambda m: colab_url(m[2], version), text)


def release_problems(path: Path, version: str | None = None) -> list[str]:
    """Why notebook ``path`` is not of release ``version`` (default
    :func:`routerlab.version.release`), one sentence each: its first cell installs another
    release, or its badge opens another one in Colab. Empty when it is."""
    path = Path(path)
    version = version or release()
    cells = json.loads(path.read_text()).get("cells") or []
    problems = []
    first = "".join(cells[0]["source"]) if cells else ""
    if first != bootstrap_source(version):
        said = re.search(r"@v([^\s\"]+)\"", first)
        problems.append(f"{path.name}: its first cell installs {'v' + said[1] if said else 'no release'}, "
                        f"not v{version}")
    md = first_markdown(path) if any(c["cell_type"] == "markdown" for c in cells) else ""
    if not md.startswith(colab_badge(path.stem, version)):
        opened = COLAB_BADGE.search(md)
        problems.append(f"{path.name}: its Colab badge opens {opened[1] if opened else 'nothing'}, not v{version}")
    return problems


#: Around the citations in a notebook's first markdown cell (invisible once rendered): what
#: lies between them is generated (:func:`sources_block`), and replaced when regenerated.
SOURCES_BEGIN = "<!-- sources: generated from lib/routerlab/data/sources.yaml, do not edit -->"
SOURCES_END = "<!-- /sources -->"


def sources_block(name: str) -> str:
    """The citations of notebook ``name`` (a stem) as its first markdown cell carries them,
    between :data:`SOURCES_BEGIN` and :data:`SOURCES_END`: from ``data/sources.yaml``
    (:func:`routerlab.analysis.citations.figure_set`)."""
    from routerlab.analysis import citations

    return f"{SOURCES_BEGIN}\n{citations.figure_set(name).markdown()}\n{SOURCES_END}"


def with_sources(markdown: str, name: str) -> str:
    """A notebook's first markdown cell ``markdown`` with its citations current: the block
    it has replaced, else one put after the title (the first ``# `` line)."""
    block = sources_block(name)
    start = markdown.find(SOURCES_BEGIN)
    if start >= 0:
        end = markdown.find(SOURCES_END, start)
        if end < 0:
            raise RouterlabError(f"{name}: the first markdown cell opens the sources block but never closes it")
        return markdown[:start] + block + markdown[end + len(SOURCES_END):]
    lines = markdown.split("\n")
    title = next((i for i, line in enumerate(lines) if line.startswith("# ")), None)
    if title is None:
        raise RouterlabError(f"{name}: the first markdown cell has no title (a '# ' line) to put the sources under")
    return "\n".join(lines[:title + 1] + ["", block] + lines[title + 1:])


def first_markdown(path: Path) -> str:
    """The text of notebook ``path``'s first markdown cell (its badge, title and sources)."""
    cells = json.loads(Path(path).read_text())["cells"]
    return "".join(next(c for c in cells if c["cell_type"] == "markdown")["source"])


def refresh_sources(path: Path) -> bool:
    """Rewrite notebook ``path``'s first markdown cell with its current citations
    (:func:`with_sources`); True if it changed. The notebook is written back as it was read
    otherwise (same JSON layout), so that the change is the only difference."""
    path = Path(path)
    nb = json.loads(path.read_text())
    cell = next(c for c in nb["cells"] if c["cell_type"] == "markdown")
    old = "".join(cell["source"])
    new = with_sources(old, path.stem)
    if new == old:
        return False
    _write_lines(cell, new)
    path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
    return True


def notebooks_dir() -> Path:
    """The notebooks: the clone's ``notebooks/``, or the copy in the installed package."""
    return project_dir("notebooks")


def copy_notebooks(dest: Path, *, overwrite: bool = False) -> list[Path]:
    """Copy every notebook into ``dest`` (created), editable: how a course hands them out.

    An existing notebook there is kept (a student's work) unless ``overwrite``."""
    import shutil

    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    written = []
    for nb in list_notebooks():
        target = dest / nb.name
        if target.exists() and not overwrite:
            continue
        shutil.copyfile(nb, target)
        written.append(target)
    return written


def list_notebooks(folder: Path | None = None) -> list[Path]:
    """The project's notebooks, sorted by name."""
    folder = folder or notebooks_dir()
    return sorted(p for p in folder.glob("*.ipynb") if not p.name.startswith("."))


#: Parameters that name a file or folder. A relative one is taken from where the caller
#: runs (``routerlab figures -p data_dir=runs/x`` in a shell), not from the folder the
#: notebook's kernel starts in.
PATH_PARAMETERS = ("data_dir", "config")


def parameters_of(path: Path) -> dict:
    """The parameters a notebook declares: name -> {"default", "inferred_type_name", "help"}."""
    import papermill as pm

    return pm.inspect_notebook(str(path))


def run(path: Path, out_dir: Path, parameters: dict | None = None, *,
        kernel: str | None = None) -> RunResult:
    """Execute one notebook with papermill, saving the executed copy and its figures.

    Parameters
    ----------
    path : pathlib.Path
        The notebook.
    out_dir : pathlib.Path
        Output folder: the executed notebook goes to ``out_dir/<name>.ipynb`` and its
        figures to ``out_dir/<name>/``.
    parameters : dict, optional
        Values for parameters the notebook declares (others are ignored); a relative
        path in one of :data:`PATH_PARAMETERS` is resolved from the current folder.
    """
    import papermill as pm

    name = path.stem
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    declared = parameters_of(path)
    params = {k: v for k, v in (parameters or {}).items() if k in declared}
    for k in PATH_PARAMETERS:
        # the caller's relative path, not one inside the folder the kernel starts in
        if isinstance(params.get(k), str) and params[k]:
            params[k] = str(Path(params[k]).expanduser().resolve())
    if "out_dir" in declared:
        params["out_dir"] = str((out_dir / name).resolve())
    output = out_dir / f"{name}.ipynb"
    t0 = time.perf_counter()
    try:
        # a notebook of the installed package runs in the output folder: nothing it
        # writes may land inside the package
        root = repo_root()
        in_clone = root is not None and path.resolve().is_relative_to(root)
        # the kernel is started in its folder (nbclient's resources path); papermill's own
        # cwd= would chdir this whole process, which notebooks run in parallel threads
        # (routerlab figures -j) undo in the wrong order
        cwd = str((path.parent if in_clone else out_dir).resolve())
        pm.execute_notebook(str(path.resolve()), str(output.resolve()), parameters=params, kernel_name=kernel,
                            # papermill's own bar (tqdm) stays off: the library draws nothing
                            progress_bar=False, resources={"metadata": {"path": cwd}},
                            # the kernel warns of TCP without encryption on every run: it talks
                            # only to this process on loopback
                            extra_arguments=["--IPKernelApp.log_level=CRITICAL"])
    except pm.PapermillExecutionError as e:
        status = "skipped" if e.ename == "DataUnavailable" else "failed"
        msg = f"{e.ename}: {e.evalue}"
        return RunResult(name, status, msg, time.perf_counter() - t0, output)
    except Exception as e:  # noqa: BLE001 - a dead kernel fails this notebook, not the others
        return RunResult(name, "failed", f"{type(e).__name__}: {e}".splitlines()[0], time.perf_counter() - t0,
                         output)
    return RunResult(name, "ok", "", time.perf_counter() - t0, output)


def run_all(out_dir, *, only: list[str] | None = None, parameters: dict | None = None,
            on_result=None, jobs: int | None = None) -> list[RunResult]:
    """Run every notebook in replay mode (the ``routerlab figures`` job).

    Parameters
    ----------
    out_dir : path-like
        Output folder (see :func:`run`).
    only : list of str, optional
        Notebook names (stems, or a unique prefix) to run; default all.
    parameters : dict, optional
        Parameter values, passed to each notebook that declares them; ``mode`` is always
        ``"replay"``. A name that no notebook declares is an error.
    on_result : callable, optional
        Called with each :class:`RunResult` as it finishes (progress reporting).
    jobs : int, optional
        Notebooks run at the same time, each in its own kernel (default: the CPUs this
        process may use). The slowest start first, so that the others fill the other CPUs
        meanwhile: slowest by the last run's record in ``out_dir``, else by the notebook's
        own ``metadata.routerlab.replay_seconds`` (its replay time on a 2-CPU machine).

    Returns
    -------
    list of RunResult
        In the order of the notebooks, whatever order they finished in.
    """
    from concurrent.futures import ThreadPoolExecutor, as_completed

    books = list_notebooks()
    if only:
        chosen = []
        for want in only:
            hits = [b for b in books if b.stem == want] or [b for b in books if b.stem.startswith(want)]
            if len(hits) != 1:
                names = ", ".join(b.stem for b in books)
                raise ParameterError("--only", f"{want!r} matches {len(hits)} notebooks (have: {names})")
            chosen.append(hits[0])
        books = chosen
    parameters = dict(parameters or {})
    if parameters.get("mode", "replay") != "replay":
        raise ParameterError("mode", "routerlab figures always replays; run a notebook by hand to measure")
    declared = set().union(*(parameters_of(b) for b in books)) if books else set()
    unknown = sorted(set(parameters) - declared)
    if unknown:
        raise ParameterError("-p", f"no notebook declares parameter(s) {', '.join(unknown)}")
    parameters["mode"] = "replay"
    jobs = max(1, min(jobs or len(os.sched_getaffinity(0)), len(books)))
    results = {}
    # Threads suffice: each notebook runs in its own kernel process, and a thread only
    # waits for it.
    with ThreadPoolExecutor(jobs) as pool:
        futures = [pool.submit(run, b, Path(out_dir), parameters)
                   for b in sorted(books, key=lambda b: -(last_seconds(Path(out_dir), b.stem) or expected_seconds(b)))]
        try:
            for f in as_completed(futures):
                r = f.result()
                results[r.name] = r
                if on_result:
                    on_result(r)
        except KeyboardInterrupt:
            for f in futures:
                f.cancel()
            _stop_kernels()
            raise
    return [results[b.stem] for b in books]


def last_seconds(out_dir: Path, name: str) -> float:
    """Wall time in seconds of the last run of notebook ``name`` into ``out_dir``, as
    papermill recorded it in the executed copy (0 if there is none)."""
    try:
        meta = json.loads((out_dir / f"{name}.ipynb").read_text())["metadata"]["papermill"]
        return float(meta.get("duration") or 0)
    except (OSError, ValueError, KeyError, TypeError):
        return 0.0


def expected_seconds(path: Path) -> float:
    """How long notebook ``path`` takes to replay, as it says itself
    (``metadata.routerlab.replay_seconds``; 0 if it does not say)."""
    try:
        return float(json.loads(path.read_text())["metadata"]["routerlab"]["replay_seconds"])
    except (OSError, ValueError, KeyError, TypeError):
        return 0.0


def _stop_kernels():
    """Kill the kernels (and whatever they started) of notebooks still running, so that
    their threads end at once instead of after their notebook."""
    import psutil  # ipykernel's dependency, so always there with papermill

    for child in psutil.Process().children(recursive=True):
        try:
            child.kill()
        except psutil.NoSuchProcess:
            pass


def check_mode(mode: str, *, measurable: bool = True, needs_testbed: bool = True) -> str:
    """Validate a notebook's ``mode`` parameter ("replay" or "measure").

    ``measurable=False`` for notebooks whose data cannot be measured here (published
    data); ``measure`` is then refused with a clear message. ``measure`` is also refused,
    in one sentence, where there is no root or no network namespaces (Colab), unless
    ``needs_testbed=False`` (in-memory benchmarks, synthetic models)."""
    if mode not in ("replay", "measure"):
        raise ParameterError("mode", f"must be 'replay' or 'measure', got {mode!r}")
    if mode == "measure" and not measurable:
        raise ParameterError("mode", "this notebook draws published data; there is nothing to measure")
    if mode == "measure" and needs_testbed and not can_measure():
        from routerlab.errors import NeedsRoot

        raise NeedsRoot("mode='measure' needs root and network namespaces, which this machine does not give "
                        "(Colab does not); set mode='replay' to draw the committed datasets")
    return mode


def can_measure() -> bool:
    """Root and a network namespace of our own: what measuring on the testbed needs (a
    container may run as root and still be refused one, as Colab is)."""
    import os
    import subprocess

    if os.geteuid() != 0:
        return False
    try:
        return subprocess.run(["unshare", "--net", "true"], capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False
