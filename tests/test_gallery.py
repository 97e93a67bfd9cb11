"""The gallery (docs/gallery/, docs/gallery.md, the README's table): every figure set is
there, drawn from the data now committed, and only from the data it names."""

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import ROOT
from routerlab.publish import gallery, notebooks
from routerlab.cli import app
from routerlab.errors import RouterlabError


def test_the_committed_gallery_is_current_and_shows_every_figure_set():
    assert gallery.check() == []
    sets = {s.name for s in gallery.figure_sets()}
    assert sets == {p.stem for p in notebooks.list_notebooks()}
    r = CliRunner().invoke(app, ["gallery", "--check"])
    assert r.exit_code == 0 and f"gallery current: {len(sets)} figure sets" in r.output


def _copy(tmp_path: Path) -> Path:
    """The gallery's files in a folder of their own, as check() reads them."""
    for rel in (gallery.FOLDER, gallery.PAGE, Path("README.md")):
        src, dst = ROOT / rel, tmp_path / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        (shutil.copytree if src.is_dir() else shutil.copyfile)(src, dst)
    return tmp_path


def test_check_names_a_changed_input_a_missing_image_and_an_edited_table(tmp_path):
    base = _copy(tmp_path)
    manifest = json.loads((base / gallery.MANIFEST).read_text())
    table = next(p for p in manifest["router-comparison"]["inputs"] if p.endswith("trials.csv"))
    manifest["router-comparison"]["inputs"][table] = "0" * 64
    del manifest["testbed-sweeps"]["inputs"]["datasets/testbed-bmv2/trials.csv"]
    (base / gallery.MANIFEST).write_text(json.dumps(manifest))
    (base / gallery.FOLDER / "fast-reroute" / "fast_reroute.png").unlink()
    readme = base / "README.md"
    readme.write_text(readme.read_text().replace("| figure set | figure | open |", "| set | figure | open |"))
    problems = gallery.check(base)
    assert f"router-comparison: {table} changed since it was drawn" in problems
    assert "testbed-sweeps: datasets/testbed-bmv2/trials.csv is new since it was drawn" in problems
    assert "fast-reroute: docs/gallery/fast-reroute/fast_reroute.png is missing" in problems
    assert "README.md: its gallery table is not the one the gallery gives" in problems
    assert len(problems) == 4, problems


def test_inputs_are_the_notebook_and_the_tables_of_its_datasets():
    got = gallery.inputs("testbed-sweeps")
    assert "notebooks/testbed-sweeps.ipynb" in got
    assert {p.split("/")[1] for p in got if p.startswith("datasets/")} == {"testbed-veth", "testbed-bmv2",
                                                                            "testbed-click", "testbed-vpp"}
    assert not [p for p in got if p.endswith((".md", ".png", "facts.json"))]
    assert list(gallery.inputs("pastrami-experiments"))[1] == "lib/routerlab/data/pastrami-registry.txt"
    moonroute = gallery.inputs("moonroute-authors")
    assert "lib/routerlab/data/moonroute-registry.txt" in moonroute and "datasets/microbench/batch.csv" in moonroute
    with pytest.raises(RouterlabError, match="'nosuch' is not in routerlab.publish.gallery.INPUTS"):
        gallery.inputs("nosuch")


def test_the_anchor_is_the_one_the_docs_site_makes():
    assert gallery.anchor("MoonRoute comparison and FastClick's batch size") == \
        "moonroute-comparison-and-fastclicks-batch-size"
    assert gallery.anchor("PASTRAMI experiments: one panel per experiment (Figs 9-122), Fig 6") == \
        "pastrami-experiments-one-panel-per-experiment-figs-9-122-fig-6"


@pytest.mark.slow
def test_a_figure_set_that_reads_data_it_does_not_name_is_not_drawn(tmp_path, monkeypatch):
    monkeypatch.setitem(gallery.INPUTS, "click-measure", ())
    with pytest.raises(RouterlabError, match=r"^figure set click-measure: not drawn from its inputs \(none\)"):
        gallery.draw("click-measure", tmp_path)


@pytest.mark.slow
def test_a_figure_set_drawn_again_is_the_committed_one(tmp_path):
    from matplotlib.testing.compare import compare_images

    (png,) = gallery.draw("click-measure", tmp_path)
    committed = ROOT / gallery.FOLDER / "click-measure" / png.name
    assert compare_images(str(committed), str(png), tol=1) is None
