"""Every notebook: layout rules, and execution under papermill (replay mode)."""

import json
import re
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
    assert nb.cells[0].source == notebooks.bootstrap_source(), (
        "first cell: not the release's install; run .venv/bin/python scripts/release.py prepare")
    assert notebooks.first_markdown(path).startswith(notebooks.colab_badge(path.stem)), (
        "first markdown cell: no Colab badge of the release; run .venv/bin/python scripts/release.py prepare")
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


def _params(path, sample, request):
    # the PASTRAMI notebook replays the shared sample, MoonRoute's the authors' files (the
    # shared copy, else downloaded); the others replay committed datasets
    if path.stem == "moonroute-authors":
        return {"data_dir": str(request.getfixturevalue("moonroute_copy"))}
    return {"data_dir": str(sample)} if path.stem == "pastrami-experiments" else {}


@pytest.mark.parametrize("path", BOOKS, ids=lambda p: p.stem)
def test_executes_in_replay_mode(path, tmp_path, pastrami_sample, request):
    r = notebooks.run(path, tmp_path, {**_params(path, pastrami_sample, request), "mode": "replay", "show_panels": 1})
    assert r.status == "ok", r.message
    figs = list((tmp_path / path.stem).rglob("*.png"))
    assert figs and all(f.with_suffix(".svg").is_file() for f in figs)


def test_the_first_cell_installs_the_release_and_is_regenerated(tmp_path, monkeypatch):
    """The Colab cell installs the tag of the release (v + CITATION.cff's version), not the
    default branch, and the badge opens the notebook at that same tag; refresh_bootstrap
    rewrites old ones and changes nothing else."""
    from routerlab import version

    monkeypatch.setattr(notebooks, "release", lambda: "9.8.7")
    assert f'"routerlab @ git+{notebooks.repository_url()}@v9.8.7"' in notebooks.bootstrap_source()
    assert notebooks.bootstrap_source().count("@") == 2  # the pip requirement's and the tag's
    assert notebooks.colab_url("x").endswith("/blob/v9.8.7/notebooks/x.ipynb")
    monkeypatch.undo()
    assert f"@v{version.release()}\"" in notebooks.bootstrap_source()
    book = _notebook(tmp_path / "book.ipynb", '%pip install -q "routerlab @ git+https://example.org/x"', "x = 1")
    nb = nbformat.read(book, as_version=4)
    old_badge = notebooks.colab_badge("book").replace(f"/blob/v{version.release()}/", "/blob/main/")
    nb.cells.insert(1, nbformat.v4.new_markdown_cell(f"{old_badge}\n\n# Book\n\ntext"))
    nbformat.write(nb, book)
    before = json.loads(book.read_text())
    assert notebooks.release_problems(book) == [
        "book.ipynb: its first cell installs no release, not v" + version.release(),
        "book.ipynb: its Colab badge opens main, not v" + version.release()]
    assert notebooks.refresh_bootstrap(book) is True
    after = json.loads(book.read_text())
    assert "".join(after["cells"][0]["source"]) == notebooks.bootstrap_source()
    assert "".join(after["cells"][1]["source"]) == f"{notebooks.colab_badge('book')}\n\n# Book\n\ntext"
    assert after["cells"][2:] == before["cells"][2:] and after["metadata"] == before["metadata"]
    assert notebooks.refresh_bootstrap(book) is False
    assert notebooks.release_problems(book) == []
    # a cell without a badge gets one first
    assert notebooks.with_badge("# T", "book", "1.2.3") == f"{notebooks.colab_badge('book', '1.2.3')}\n\n# T"
    md = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# Title")])
    nbformat.write(md, tmp_path / "md.ipynb")
    with pytest.raises(notebooks.RouterlabError, match="md.ipynb: the first cell must be the code cell"):
        notebooks.refresh_bootstrap(tmp_path / "md.ipynb")


@pytest.mark.parametrize("path", BOOKS, ids=lambda p: p.stem)
def test_colab_opens_the_notebook_of_the_release_its_cell_installs(path):
    """The badge opens the notebook at the tag its first cell installs: the notebook and
    the code it runs are the same release (not the notebook of the default branch)."""
    installs = re.search(r"@v([^\s\"]+)\"", "".join(nbformat.read(path, as_version=4).cells[0].source))
    opens = notebooks.COLAB_BADGE.search(notebooks.first_markdown(path))
    assert installs and opens, path
    assert opens[1] == f"v{installs[1]}" and opens[2] == path.stem, (opens[0], installs[0])


def test_every_colab_link_of_the_docs_opens_the_release():
    """Every Colab link of README.md and docs/ is colab_url's: the notebook at the tag its
    first cell installs. README.md's table and docs/gallery.md are routerlab gallery's,
    docs/notebooks.md is rewritten by scripts/release.py prepare."""
    from routerlab.version import repo_root

    root = repo_root()
    if root is None:
        pytest.skip("not run from a clone")
    stale = [f"{page.relative_to(root)}: {m[0]}"
             for page in [root / "README.md", *sorted((root / "docs").rglob("*.md"))]
             for m in notebooks.COLAB_LINK.finditer(page.read_text()) if m[0] != notebooks.colab_url(m[2])]
    assert not stale, "run scripts/release.py prepare, then routerlab gallery:\n" + "\n".join(stale)


def test_missing_data_is_reported_as_skipped(tmp_path):
    book = next(b for b in BOOKS if b.stem == "pastrami-experiments")
    r = notebooks.run(book, tmp_path, {"data_dir": str(tmp_path / "absent")})
    assert r.status == "skipped" and "PASTRAMI data" in r.message and "\n" not in r.message
    executed = json.loads((tmp_path / "pastrami-experiments.ipynb").read_text())
    assert executed["cells"]  # the executed copy is still written, for the user to read


@pytest.mark.slow
def test_the_experiments_notebook_draws_a_panel_for_every_published_file(tmp_path, pastrami_published):
    from routerlab.analysis import pastrami

    book = next(b for b in BOOKS if b.stem == "pastrami-experiments")
    r = notebooks.run(book, tmp_path, {"data_dir": str(pastrami_published), "show_panels": 1})
    assert r.status == "ok", r.message
    from routerlab.analysis import plots

    panels = {p.stem for p in (tmp_path / book.stem / "panels").glob("*.png")}
    files, _ = pastrami.raw_sources(pastrami_published)
    assert len(panels) == len(files) == 114
    assert {plots.slug(p.removesuffix(".txt")) for p in pastrami.archived()} <= panels
    assert (tmp_path / book.stem / "misure_zip_only.png").is_file()


def test_a_damaged_archive_fails_the_experiments_notebook_in_one_line_after_the_other_panels(
        tmp_path, pastrami_archive, pastrami_sample):
    data = tmp_path / "data"
    data.mkdir()
    good = sorted((pastrami_sample / "vm").rglob("*.txt"))
    for f in good:
        (data / f.name).write_bytes(f.read_bytes())
    damaged = bytearray(pastrami_archive.read_bytes())
    damaged[len(damaged) // 3] ^= 0xFF
    (data / "misure.zip").write_bytes(bytes(damaged))
    book = next(b for b in BOOKS if b.stem == "pastrami-experiments")
    r = notebooks.run(book, tmp_path / "out", {"data_dir": str(data), "show_panels": 1})
    assert r.status == "failed" and "\n" not in r.message
    assert r.message.startswith(f"DataFormatError: {data / 'misure.zip'}: SHA-256 ")
    drawn = sorted(p.stem for p in (tmp_path / "out" / book.stem / "panels").glob("*.png"))
    assert drawn == sorted(f.stem for f in good)


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
