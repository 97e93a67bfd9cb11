"""The publications the figure sets come from (lib/routerlab/data/sources.yaml): one entry per
notebook and per transcribed table, each checked, and the texts written from it (the
notebooks' first cell, datasets/reference/README.md) still saying what it says."""

import re
from pathlib import Path

import pytest
import yaml

from routerlab.analysis import citations
from routerlab.publish import notebooks
from routerlab.errors import DataFormatError, ParameterError

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "datasets" / "reference"


def test_every_notebook_and_only_notebooks_have_a_figure_set():
    assert set(citations.catalogue().figure_sets) == {p.stem for p in notebooks.list_notebooks()}


def test_every_transcribed_table_names_its_source_and_only_those():
    assert set(citations.catalogue().transcribed) == {p.name for p in REFERENCE.glob("*.csv")}


def test_the_gallery_gets_sources_in_order():
    srcs = citations.for_figure_set("router-comparison")
    assert [s.key for s in srcs][:1] == ["rackcorp-100ge"]
    assert all(isinstance(s, citations.Source) for s in srcs)
    click = citations.for_figure_set("click-measure")[0]
    assert click.title == "The Click Modular Router" and click.year == 2000
    assert "[doi:10.1145/354871.354874](https://doi.org/10.1145/354871.354874)" in click.markdown()
    assert click.text().startswith("Eddie Kohler, Robert Morris, Benjie Chen, John Jannotti and M. Frans Kaashoek. "
                                   '"The Click Modular Router". ACM Transactions on Computer Systems')
    with pytest.raises(ParameterError, match="no-such-notebook"):
        citations.for_figure_set("no-such-notebook")


def test_a_citation_says_what_was_not_found():
    s = citations.Source(key="x", label="X report", venue="Somewhere", missing=("title", "authors", "year", "link"),
                         note="looked everywhere")
    assert s.markdown() == "X report. Somewhere. Not found: title, authors, year, address."
    assert s.link is None


def test_a_citation_says_what_is_known_after_what_was_not_found():
    s = citations.Source(key="x", label="X report", missing=("title", "authors", "venue", "year", "link"),
                         note="looked everywhere", known="a report on Y, described only in Z.")
    assert s.markdown() == ("X report. Not found: title, authors, venue, year, address. "
                            "What is known: a report on Y, described only in Z.")
    assert s.text().endswith("What is known: a report on Y, described only in Z.")


def test_every_source_with_fields_missing_says_what_is_known_in_the_gallery():
    """The packaged list's sources that miss fields the issue named (FastPath, the
    fast-reroute poster, the 100GE write-up) say what is known of them where they are cited."""
    for key in ("fastpath", "frr-poster", "rackcorp-100ge"):
        source = citations.catalogue().sources[key]
        assert source.missing and source.known, key
        assert "What is known: " in source.markdown(), key


def test_sources_that_figures_are_ours_say_so():
    assert "routerlab's own measurements" in citations.figure_set("testbed-sweeps").markdown()
    assert "nothing is measured" in citations.figure_set("pastrami-methodology").markdown()
    both = citations.figure_set("router-comparison").markdown()
    assert both.startswith("**Sources:**\n- ") and "transcribed" in both


def _write(tmp_path, doc) -> Path:
    path = tmp_path / "sources.yaml"
    path.write_text(yaml.safe_dump(doc, allow_unicode=True))
    return path


def _doc():
    return yaml.safe_load(citations.default_path().read_text())


@pytest.mark.parametrize("change, says", [
    (lambda d: d["sources"]["click"].update(jounal="TOCS"), r"source 'click': unknown key 'jounal'; allowed: label, title"),
    (lambda d: d["sources"]["click"].pop("year"), r"source 'click': no year: give it, or name it in missing"),
    (lambda d: d["sources"]["click"].update(missing=["year"]), r"source 'click': year is given and also named"),
    (lambda d: d["sources"]["fastpath"].pop("note"), r"source 'fastpath': names missing fields but has no note"),
    (lambda d: d["sources"]["click"].update(known="a paper"), r"source 'click': has known but names nothing missing"),
    (lambda d: d["sources"]["click"].update(doi="https://doi.org/10.1145/354871.354874"), r"bare DOI"),
    (lambda d: d["sources"]["click"].pop("label"), r"source 'click': missing key\(s\) label"),
    (lambda d: d["sources"]["click"].update(label=" "), r"source 'click': needs a label"),
    (lambda d: d["figure_sets"]["click-measure"].update(cites=["click", "kohler2000"]),
     r"figure set 'click-measure': cites unknown source\(s\) kohler2000"),
    (lambda d: d["figure_sets"]["click-measure"].update(data="mine"), r"figure set 'click-measure': data must be"),
    (lambda d: d.update(bibliography={}), r"the file: unknown key 'bibliography'; allowed: sources, figure_sets, transcribed"),
    (lambda d: d["transcribed"].update({"x.csv": "nobody"}), r"transcribed table 'x.csv': unknown source 'nobody'"),
])
def test_a_broken_entry_is_refused_naming_the_file_and_the_entry(tmp_path, change, says):
    doc = _doc()
    change(doc)
    path = _write(tmp_path, doc)
    with pytest.raises(DataFormatError, match=says) as e:
        citations.load(path)
    assert isinstance(e.value.line, int) and str(e.value).startswith(f"{path}:{e.value.line}: ")


def test_the_packaged_file_round_trips(tmp_path):
    assert citations.load(_write(tmp_path, _doc())) == citations.load()


def _readme_rows() -> dict[str, str]:
    rows = {}
    for line in (REFERENCE / "README.md").read_text().splitlines():
        m = re.match(r"\| `([^`]+\.csv)` \| (.*?) \|", line)
        if m:
            rows[m.group(1)] = m.group(2)
    return rows


def test_the_reference_readme_cites_each_table_as_the_sources_file_does():
    rows = _readme_rows()
    assert set(rows) == set(citations.catalogue().transcribed)
    for table, source in citations.catalogue().transcribed.items():
        assert rows[table].startswith(source.markdown()), (
            f"datasets/reference/README.md, row {table}: its citation is not sources.yaml's; write "
            f"{source.markdown()!r}")


def test_a_changed_citation_makes_the_readme_and_the_notebooks_stale(monkeypatch, tmp_path):
    """The checks above and in test_notebooks can fail: change a title in the list and
    neither the README nor the notebook carries it any more."""
    doc = _doc()
    doc["sources"]["rackcorp-100ge"]["title"] = "Another title"
    changed = citations.load(_write(tmp_path, doc))
    monkeypatch.setattr(citations, "catalogue", lambda: changed)
    assert not _readme_rows()["linux-danos-vyos-100ge.csv"].startswith(
        citations.for_table("linux-danos-vyos-100ge.csv").markdown())
    book = next(p for p in notebooks.list_notebooks() if p.stem == "router-comparison")
    first = notebooks.first_markdown(book)
    assert notebooks.sources_block("router-comparison") not in first
    # and regenerating puts the new one in place of the old, once
    fresh = notebooks.with_sources(first, "router-comparison")
    assert "Another title" in fresh and fresh.count(notebooks.SOURCES_BEGIN) == 1
    assert notebooks.with_sources(fresh, "router-comparison") == fresh


def test_sources_go_under_the_title_of_a_cell_that_has_none():
    md = "[badge](x)\n\n# A title\n\nText."
    out = notebooks.with_sources(md, "pastrami-methodology")
    assert out.startswith("[badge](x)\n\n# A title\n\n" + notebooks.SOURCES_BEGIN)
    assert out.endswith(notebooks.SOURCES_END + "\n\nText.")
