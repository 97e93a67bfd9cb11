"""Every notebook: layout rules, and execution under papermill (replay mode)."""

import json
from pathlib import Path

import nbformat
import pytest

from routerlab.publish import notebooks

BOOKS = notebooks.list_notebooks()


def test_there_are_notebooks():
    assert {"pastrami-methodology", "pastrami-experiments", "testbed-sweeps", "moonroute-batch",
            "fastpath-consolidation", "router-comparison", "fast-reroute"} <= {b.stem for b in BOOKS}


@pytest.mark.parametrize("path", BOOKS, ids=lambda p: p.stem)
def test_layout(path):
    nb = nbformat.read(path, as_version=4)
    assert nb.cells[0].source == notebooks.bootstrap_source(), "first cell: regenerate from pyproject's URL"
    assert notebooks.sources_block(path.stem) in notebooks.first_markdown(path), (
        "first markdown cell: its sources are not data/sources.yaml's; run routerlab.publish.notebooks.refresh_sources")
    tagged = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(tagged) == 1
    params = notebooks.parameters_of(path)
    assert "mode" in params and "out_dir" in params
    assert params["mode"]["default"] == '"replay"'
    for name, p in params.items():
        assert p["help"], f"parameter {name} has no trailing help comment"
        assert p["inferred_type_name"] != "None", f"parameter {name} has no type"
    for c in nb.cells:
        if c.cell_type == "code":
            assert not c.get("outputs") and c.get("execution_count") is None, "outputs not stripped"
    # `routerlab figures` starts the slowest first on a fresh machine: each says how slow
    assert notebooks.expected_seconds(path) > 0, "metadata.routerlab.replay_seconds missing"


def _params(path, sample):
    # the PASTRAMI notebook replays the shared sample; the others replay committed datasets
    return {"data_dir": str(sample)} if path.stem == "pastrami-experiments" else {}


@pytest.mark.parametrize("path", BOOKS, ids=lambda p: p.stem)
def test_executes_in_replay_mode(path, tmp_path, pastrami_sample):
    r = notebooks.run(path, tmp_path, {**_params(path, pastrami_sample), "mode": "replay", "show_panels": 1})
    assert r.status == "ok", r.message
    figs = list((tmp_path / path.stem).rglob("*.png"))
    assert figs and all(f.with_suffix(".svg").is_file() for f in figs)


def test_missing_data_is_reported_as_skipped(tmp_path):
    book = next(b for b in BOOKS if b.stem == "pastrami-experiments")
    r = notebooks.run(book, tmp_path, {"data_dir": str(tmp_path / "absent")})
    assert r.status == "skipped" and "PASTRAMI data" in r.message and "\n" not in r.message
    executed = json.loads((tmp_path / "pastrami-experiments.ipynb").read_text())
    assert executed["cells"]  # the executed copy is still written, for the user to read


def _notebook(path, *cells: str, parameters: str = ""):
    """A small notebook of code ``cells`` written to ``path`` (with a ``parameters`` cell
    first when given), for the python3 kernel."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c) for c in cells]
    if parameters:
        params = nbformat.v4.new_code_cell(parameters)
        params.metadata["tags"] = ["parameters"]
        nb.cells.insert(0, params)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return path


def test_a_relative_data_dir_is_the_callers(tmp_path, monkeypatch):
    """`routerlab figures -p data_dir=runs/x` means runs/x where the user typed it, though
    the kernel starts in the notebook's own folder."""
    book = _notebook(tmp_path / "books" / "book.ipynb",
                     "from pathlib import Path\nprint(Path(data_dir).is_dir(), Path(config).is_file(), Path.cwd())",
                     parameters='data_dir: str = ""  # dataset folder\nconfig: str = ""  # a .click file')
    (tmp_path / "runs" / "x").mkdir(parents=True)
    (tmp_path / "my.click").write_text("// mine\n")
    monkeypatch.chdir(tmp_path)
    r = notebooks.run(book, tmp_path / "out", {"data_dir": "runs/x", "config": "my.click"})
    assert r.status == "ok", r.message
    out = json.loads((tmp_path / "out" / "book.ipynb").read_text())["cells"][-1]["outputs"][0]["text"]
    found, cfg, cwd = "".join(out).split(" ", 2)
    assert (found, cfg) == ("True", "True"), out
    assert Path(cwd.strip()) != tmp_path  # the kernel did start elsewhere


def test_parallel_runs_leave_the_process_where_it_was(tmp_path):
    """Each kernel starts in its own folder, and this process's working directory never
    moves: notebooks run in parallel threads (`routerlab figures -j`), and a chdir per
    notebook, undone in the wrong order, once left the caller in another run's folder."""
    import os
    from concurrent.futures import ThreadPoolExecutor

    books = [_notebook(tmp_path / f"book{i}.ipynb", "import os, time\ntime.sleep(0.5 * %d)\nprint(os.getcwd())" % i)
             for i in range(2)]
    here = os.getcwd()
    outs = [tmp_path / f"out{i}" for i in range(2)]
    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(lambda a: notebooks.run(*a), zip(books, outs)))
    assert os.getcwd() == here
    for r, out in zip(results, outs):
        assert r.status == "ok", r.message
        printed = nbformat.read(r.output, as_version=4).cells[0].outputs[0]["text"].strip()
        assert printed == str(out.resolve())
