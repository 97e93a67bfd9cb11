"""Running the project's notebooks with papermill (the ``routerlab figures`` job).

Every notebook in ``notebooks/`` has a cell tagged ``parameters`` with typed defaults,
among them ``mode`` ("replay" or "measure") and ``out_dir`` (where figures are saved).
``routerlab figures`` always replays. A notebook whose data is not at hand raises
:class:`routerlab.errors.DataUnavailable`; it is then reported as skipped, in one line.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from .datasets import repo_root
from .errors import ParameterError, RouterlabError


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


def bootstrap_source() -> str:
    """Source of every notebook's first cell: in Colab (or any kernel without routerlab)
    it installs the package from the project's repository."""
    return (
        "# In Colab, or any kernel without routerlab: install it from the project's repository.\n"
        "try:\n"
        "    import routerlab\n"
        "except ImportError:\n"
        f'    %pip install -q "routerlab @ git+{repository_url()}"\n'
        "    import routerlab"
    )


def notebooks_dir() -> Path:
    root = repo_root()
    if root is None or not (root / "notebooks").is_dir():
        raise RouterlabError("notebooks/ not found: run from a clone of the repository "
                             "(pip install -e .)")
    return root / "notebooks"


def list_notebooks(folder: Path | None = None) -> list[Path]:
    """The project's notebooks, sorted by name."""
    folder = folder or notebooks_dir()
    return sorted(p for p in folder.glob("*.ipynb") if not p.name.startswith("."))


def parameters_of(path: Path) -> dict:
    """The parameters a notebook declares: name -> {"default", "inferred_type_name", "help"}."""
    import papermill as pm

    return pm.inspect_notebook(str(path))


def run(path: Path, out_dir: Path, parameters: dict | None = None, *,
        kernel: str | None = None, progress: bool = False) -> RunResult:
    """Execute one notebook with papermill, saving the executed copy and its figures.

    Parameters
    ----------
    path : pathlib.Path
        The notebook.
    out_dir : pathlib.Path
        Output folder: the executed notebook goes to ``out_dir/<name>.ipynb`` and its
        figures to ``out_dir/<name>/``.
    parameters : dict, optional
        Values for parameters the notebook declares (others are ignored).
    """
    import papermill as pm

    name = path.stem
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    declared = parameters_of(path)
    params = {k: v for k, v in (parameters or {}).items() if k in declared}
    if "out_dir" in declared:
        params["out_dir"] = str((out_dir / name).resolve())
    output = out_dir / f"{name}.ipynb"
    t0 = time.perf_counter()
    try:
        pm.execute_notebook(str(path), str(output), parameters=params, kernel_name=kernel,
                            progress_bar=progress, cwd=str(path.parent))
    except pm.PapermillExecutionError as e:
        status = "skipped" if e.ename == "DataUnavailable" else "failed"
        msg = f"{e.ename}: {e.evalue}"
        return RunResult(name, status, msg, time.perf_counter() - t0, output)
    return RunResult(name, "ok", "", time.perf_counter() - t0, output)


def run_all(out_dir, *, only: list[str] | None = None, parameters: dict | None = None,
            on_result=None) -> list[RunResult]:
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
    """
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
    results = []
    for b in books:
        r = run(b, Path(out_dir), parameters)
        results.append(r)
        if on_result:
            on_result(r)
    return results


def check_mode(mode: str, *, measurable: bool = True) -> str:
    """Validate a notebook's ``mode`` parameter ("replay" or "measure").

    ``measurable=False`` for notebooks whose data cannot be measured here (published
    data); ``measure`` is then refused with a clear message."""
    if mode not in ("replay", "measure"):
        raise ParameterError("mode", f"must be 'replay' or 'measure', got {mode!r}")
    if mode == "measure" and not measurable:
        raise ParameterError("mode", "this notebook draws published data; there is nothing to measure")
    return mode
