"""The publications each figure set comes from, as data (``data/sources.yaml``).

One list, read and checked here, says for every notebook (a figure set, by its stem)
which publications it cites and whether its figures are the source's data, routerlab's own
measurements, or both; and for every transcribed table of ``datasets/reference/`` whose
numbers it holds. The notebooks' first cell (:func:`routerlab.publish.notebooks.sources_block`),
``datasets/reference/README.md`` and the gallery are written from it.

A field that could not be found is left out and named in the entry's ``missing``, with a
``note`` saying what was looked for and ``known`` saying what is known of the source all
the same: a citation says what is not known rather than guess, and what is.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

from routerlab import yamlfile
from routerlab.errors import DataFormatError, ParameterError, ValueRefused

#: Fields a source may leave out, if it names them in ``missing`` and says why in ``note``
#: (``link`` stands for both ``url`` and ``doi``).
MAY_BE_MISSING = ("title", "authors", "venue", "year", "link")
#: What a figure set's figures are (``data``), as the sentence under its citations says it.
DATA_KINDS = {
    "published": "The figures redraw the source's own published data.",
    "ours": "The figures are routerlab's own measurements; the method or router is the cited work's.",
    "both": "The source's numbers, transcribed, are drawn beside routerlab's own measurements of the same.",
    "synthetic": "The figures draw the source's models; nothing is measured.",
}


def _missing(v):
    if not (isinstance(v, list) and set(v) <= set(MAY_BE_MISSING)):
        raise ValueRefused(f"a list of {', '.join(MAY_BE_MISSING)}")


#: A sources file's shape (:mod:`routerlab.yamlfile`); what an entry's fields must be
#: together (a field given or named missing, a note for what is missing) is :func:`load`'s.
SOURCE = yamlfile.Shape({"label": str, "title": (str, None), "authors": (yamlfile.ListOf(str), None),
                         "venue": (str, None), "year": (int, None), "url": (str, None), "doi": (str, None),
                         "note": (str, None), "known": (str, None), "missing": (_missing, None)},
                        required=("label",))
FIGURE_SET = yamlfile.Shape({"data": str, "cites": (yamlfile.ListOf(str), None)}, required=("data",))
SHAPE = yamlfile.Shape({"sources": (yamlfile.MapOf(SOURCE, each="source {key!r}"), None),
                        "figure_sets": (yamlfile.MapOf(FIGURE_SET, each="figure set {key!r}"), None),
                        "transcribed": (yamlfile.MapOf(str, each="transcribed table {key!r}"), None)})


@dataclass(frozen=True)
class Source:
    """One publication, as far as it is known.

    Attributes
    ----------
    key : str
        Its name in ``sources.yaml``.
    label : str
        How the project's text calls it ("PASTRAMI paper").
    title, venue : str or None
        None when not found (then named in ``missing``).
    authors : tuple of str
        As the publication prints them; empty when not found.
    year : int or None
    url, doi : str or None
        The DOI without its resolver (``10.1145/...``).
    note : str
        Where the data was found, what is missing and why.
    missing : tuple of str
        Fields that could not be found (of :data:`MAY_BE_MISSING`).
    known : str
        What is known of the source where fields are missing (what it is, where it is
        described), said after them in its citation; empty when nothing is missing.
    """

    key: str
    label: str
    title: str | None = None
    authors: tuple[str, ...] = ()
    venue: str | None = None
    year: int | None = None
    url: str | None = None
    doi: str | None = None
    note: str = ""
    missing: tuple[str, ...] = ()
    known: str = ""

    @property
    def link(self) -> str | None:
        """Where to read it: the DOI's resolver address, else the URL."""
        return f"https://doi.org/{self.doi}" if self.doi else self.url

    def _authors(self) -> str:
        if len(self.authors) <= 2:
            return " and ".join(self.authors)
        return ", ".join(self.authors[:-1]) + " and " + self.authors[-1]

    def _parts(self, markdown: bool) -> list[str]:
        parts = []
        if self.authors:
            parts.append(self._authors())
        if self.title:
            parts.append(f"*{self.title}*" if markdown else f'"{self.title}"')
        else:
            parts.append(self.label)
        if self.venue:
            parts.append(self.venue)
        if self.year:
            parts.append(str(self.year))
        if self.doi:
            parts.append(f"[doi:{self.doi}]({self.link})" if markdown else f"doi:{self.doi}")
        if self.url and (not self.doi or not markdown):
            parts.append(f"<{self.url}>" if markdown else self.url)
        if self.missing:
            names = ["address" if m == "link" else m for m in self.missing]
            parts.append("Not found: " + ", ".join(names))
        if self.known:
            parts.append("What is known: " + self.known.rstrip("."))
        return parts

    def text(self) -> str:
        """The citation as plain text: authors, "title", venue, year, doi or URL, and what
        could not be found."""
        return ". ".join(self._parts(markdown=False)) + "."

    def markdown(self) -> str:
        """The citation as one line of Markdown (title in italics, the DOI or URL a link),
        saying what could not be found."""
        return ". ".join(self._parts(markdown=True)) + "."


@dataclass(frozen=True)
class FigureSet:
    """What one notebook cites.

    Attributes
    ----------
    name : str
        The notebook's stem.
    data : str
        What its figures are: a key of :data:`DATA_KINDS`.
    sources : tuple of Source
        Most important first.
    """

    name: str
    data: str
    sources: tuple[Source, ...]

    def what(self) -> str:
        """One sentence: whose data the figures draw."""
        return DATA_KINDS[self.data]

    def markdown(self) -> str:
        """The figure set's citations as Markdown: "**Source:**" (or "**Sources:**" and a
        list), then what the figures are."""
        if len(self.sources) == 1:
            head = f"**Source:** {self.sources[0].markdown()}"
        else:
            head = "**Sources:**\n" + "\n".join(f"- {s.markdown()}" for s in self.sources)
        return f"{head}\n\n{self.what()}"


@dataclass(frozen=True)
class Catalogue:
    """Everything ``sources.yaml`` says: sources by key, figure sets by notebook stem,
    transcribed tables (file name) -> source key."""

    sources: dict[str, Source]
    figure_sets: dict[str, FigureSet]
    transcribed: dict[str, Source]


def default_path() -> Path:
    """The packaged list: ``lib/routerlab/data/sources.yaml``."""
    return Path(str(resources.files("routerlab") / "data" / "sources.yaml"))


def _source(path: Path, key: str, entry) -> Source:
    """The source ``key`` from its ``entry`` (of the shape :data:`SOURCE`), checked."""
    def bad(msg, field=None):
        return DataFormatError(path, yamlfile.line_of(entry, field), f"source {key!r}: {msg}")

    if not entry["label"].strip():
        raise bad("needs a label", "label")
    missing = entry.get("missing") or []
    present = {f for f in ("title", "authors", "venue", "year") if entry.get(f) not in (None, "", [])}
    if entry.get("url") or entry.get("doi"):
        present.add("link")
    for field in MAY_BE_MISSING:
        if field not in present and field not in missing:
            raise bad(f"no {field}: give it, or name it in missing with a note saying what was looked for")
        if field in present and field in missing:
            raise bad(f"{field} is given and also named in missing", "missing")
    if missing and not str(entry.get("note") or "").strip():
        raise bad("names missing fields but has no note saying what was looked for", "missing")
    if entry.get("known") and not missing:
        raise bad("has known but names nothing missing: give its fields instead", "known")
    if "|" in str(entry.get("known") or ""):
        raise bad("known must not contain '|'", "known")
    authors = entry.get("authors") or []
    if not all(a.strip() for a in authors):
        raise bad("authors must be a list of names", "authors")
    year = entry.get("year")
    if year is not None and not 1900 < year < 2100:
        raise bad(f"year must be a year, got {year!r}", "year")
    doi = entry.get("doi")
    if doi is not None and not doi.startswith("10."):
        raise bad(f"doi must be a bare DOI (10.xxxx/...), got {doi!r}", "doi")
    url = entry.get("url")
    if url is not None and not url.startswith(("https://", "http://")):
        raise bad(f"url must be an http(s) address, got {url!r}", "url")
    for field in ("title", "venue", "label"):
        # a citation goes into Markdown tables: a bar would split the row
        if "|" in str(entry.get(field) or ""):
            raise bad(f"{field} must not contain '|'", field)
    return Source(key=key, label=entry["label"].strip(), title=entry.get("title"), authors=tuple(authors),
                  venue=entry.get("venue"), year=year, url=url, doi=doi,
                  note=" ".join(str(entry.get("note") or "").split()), missing=tuple(missing),
                  known=" ".join(str(entry.get("known") or "").split()))


def load(path: str | Path | None = None) -> Catalogue:
    """Read and check a sources file (default: the packaged one).

    Raises
    ------
    DataFormatError
        Naming the file and the entry: an unknown key, a field neither given nor named
        missing, missing fields without a note, a figure set citing an unknown source.
    """
    path = Path(path) if path else default_path()
    doc = yamlfile.load(path, "the sources file")
    yamlfile.check(doc, SHAPE, path)
    sources = {k: _source(path, k, v) for k, v in (doc.get("sources") or {}).items()}
    figure_sets = {}
    for name, entry in (doc.get("figure_sets") or {}).items():
        def bad(msg, field):
            return DataFormatError(path, yamlfile.line_of(entry, field), f"figure set {name!r}: {msg}")

        if entry["data"] not in DATA_KINDS:
            raise bad(f"data must be one of {', '.join(DATA_KINDS)}", "data")
        cites = entry.get("cites") or []
        if not cites:
            raise bad("cites no source", "cites")
        absent = [c for c in cites if c not in sources]
        if absent:
            raise bad(f"cites unknown source(s) {', '.join(absent)}", "cites")
        figure_sets[name] = FigureSet(name, entry["data"], tuple(sources[c] for c in cites))
    transcribed = {}
    for table, key in (doc.get("transcribed") or {}).items():
        if key not in sources:
            raise DataFormatError(path, yamlfile.line_of(doc["transcribed"], table),
                                  f"transcribed table {table!r}: unknown source {key!r}")
        transcribed[table] = sources[key]
    return Catalogue(sources, figure_sets, transcribed)


@cache
def catalogue() -> Catalogue:
    """The packaged sources file, read and checked once per process."""
    return load()


def figure_set(name: str) -> FigureSet:
    """Figure set ``name`` (a notebook's stem): its sources and what its figures are."""
    sets = catalogue().figure_sets
    if name not in sets:
        raise ParameterError("figure set", f"{name!r} has no entry in sources.yaml (have: {', '.join(sorted(sets))})")
    return sets[name]


def for_figure_set(name: str) -> list[Source]:
    """The publications figure set ``name`` (a notebook's stem) cites, most important first."""
    return list(figure_set(name).sources)


def for_table(file_name: str) -> Source:
    """The publication a transcribed table of ``datasets/reference/`` (its file name) comes from."""
    tables = catalogue().transcribed
    if file_name not in tables:
        raise ParameterError("table", f"{file_name!r} is not a transcribed table (have: {', '.join(sorted(tables))})")
    return tables[file_name]
