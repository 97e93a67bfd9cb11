"""The README and the documentation site: the site builds with MkDocs in strict mode, its
nav and the journal's index list every page and entry, every link of the README and
CONTRIBUTING.md resolves in the repository, every GitHub link of them and docs/ names a
path the repository has, and the README stays a front door. On the README and every page,
each glossary term's first use links to the glossary, and every constant quoted with its
value, `module.NAME` (VALUE), has that value in the code."""

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urljoin

import pytest
import yaml
from conftest import REQUIRE_ENGINES, ROOT

README = ROOT / "README.md"
CONTRIBUTING = ROOT / "CONTRIBUTING.md"
DOCS = ROOT / "docs"
#: At most this many lines: the README is a front door, the rest is in docs/.
README_MAX_LINES = 160

#: A markdown link's or image's target, `[text](target)`, or an autolink `<target>`.
LINK = re.compile(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)|<(https?://[^>\s]+)>")


def _links(text: str) -> list[str]:
    text = re.sub(r"```.*?```", "", text, flags=re.S)  # code blocks hold no links
    text = re.sub(r"`[^`\n]*`", "", text)  # nor does inline code
    return [a or b for a, b in LINK.findall(text)]


def _slug(heading: str) -> str:
    """A heading's anchor as GitHub and MkDocs' toc both make it, for plain headings."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text only
    text = re.sub(r"[^\w\- ]", "", text.strip().lower())
    return re.sub(r"[ ]+", "-", text)


def _anchors(md: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", md.read_text(), flags=re.S)
    return {_slug(h) for h in re.findall(r"^#{1,6}\s+(.+?)\s*#*$", text, re.M)}


def _repository() -> str:
    pj = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return pj["urls"]["Repository"].rstrip("/")


def _doc_files() -> list[Path]:
    return [README, CONTRIBUTING, *sorted(DOCS.rglob("*.md"))]


def relative_link_problems(md: Path, base: Path | None = None) -> list[str]:
    """What is wrong with the relative links of ``md`` (relative to ``base``, by default its
    folder): a target that is not in the repository, or an ``#anchor`` that is no heading
    of the markdown file it names."""
    problems = []
    for target in _links(md.read_text()):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # https:, mailto:, ...
            continue
        path, _, anchor = target.partition("#")
        dest = ((base or md.parent) / path).resolve() if path else md
        if not dest.is_relative_to(ROOT) or not dest.exists():
            problems.append(f"{md.name}: {target}: no such file or folder in the repository")
        elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
            problems.append(f"{md.name}: {target}: {dest.name} has no heading #{anchor}")
    return problems


def github_link_problems(md: Path) -> list[str]:
    """The links of ``md`` into the repository on GitHub (``REPO/blob|tree|raw/main/PATH``)
    whose PATH the repository does not have (blob and raw: a file; tree: a folder)."""
    pattern = re.compile(rf"^{re.escape(_repository())}/(blob|tree|raw)/main/([^#?]+)")
    problems = []
    for target in _links(md.read_text()):
        m = pattern.match(target)
        if not m:
            continue
        kind, path = m.group(1), m.group(2).rstrip("/")
        dest = ROOT / path
        ok = dest.is_dir() if kind == "tree" else dest.is_file()
        if not ok:
            problems.append(f"{md.name}: {target}: no {'folder' if kind == 'tree' else 'file'} {path}")
    return problems


def test_every_relative_link_of_the_readme_and_contributing_resolves():
    assert relative_link_problems(README) == []
    assert relative_link_problems(CONTRIBUTING) == []


def test_every_github_link_names_a_path_of_the_repository():
    problems = [p for md in _doc_files() for p in github_link_problems(md)]
    assert problems == []


def test_the_readme_is_a_front_door():
    n = len(README.read_text().splitlines())
    assert n <= README_MAX_LINES, f"README.md has {n} lines; at most {README_MAX_LINES}: move the rest into docs/"


def test_the_link_checks_can_fail(tmp_path):
    """A broken relative link, a missing anchor and GitHub links to a missing path are each
    reported; a link in inline code is not a link."""
    repo = _repository()
    page = tmp_path / "broken.md"
    page.write_text(
        "[a](README.md) [b](docs/no-such-page.md) [c](docs/index.md#no-such-heading)\n"
        "[c2](docs/engines.md#a-router-routerlab-does-not-build) `[g](not-a-link.md)`\n"
        f"[d]({repo}/blob/main/no/such/file.py) [e]({repo}/tree/main/README.md) [f]({repo}/tree/main/datasets)\n"
    )
    rel = relative_link_problems(page, base=ROOT)
    assert len(rel) == 2, rel
    assert "no-such-page.md" in rel[0] and "#no-such-heading" in rel[1]
    gh = github_link_problems(page)
    assert len(gh) == 2, gh
    assert "no/such/file.py" in gh[0] and "no folder README.md" in gh[1]


def _require_mkdocs():
    """Skip, naming mkdocs, where it is not installed; under ROUTERLAB_REQUIRE_ENGINES=1
    (make test, CI: scripts/setup.sh installs the `docs` extra) fail instead."""
    missing = [m for m in ("mkdocs", "material") if importlib.util.find_spec(m) is None]
    if missing:
        reason = (f"mkdocs not installed ({', '.join(missing)} missing): "
                  "pip install -e '.[docs]' (scripts/setup.sh does)")
        if REQUIRE_ENGINES:
            pytest.fail(f"{reason} (ROUTERLAB_REQUIRE_ENGINES=1: a missing tool fails its test)", pytrace=False)
        pytest.skip(reason)


def _mkdocs_build(config: Path, site: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(site)],
                          cwd=config.parent, capture_output=True, text=True, env=env)


@pytest.fixture(scope="module")
def built_site(tmp_path_factory) -> tuple[subprocess.CompletedProcess, Path]:
    """The site built from the repository with `mkdocs build --strict`, once for this
    module's tests: the build's result and the site's folder."""
    _require_mkdocs()
    site = tmp_path_factory.mktemp("site")
    return _mkdocs_build(ROOT / "mkdocs.yml", site), site


class _Anchors(HTMLParser):
    """Every ``<a href>`` of a page: its address, its class and its text."""

    def __init__(self):
        super().__init__()
        self.found: list[tuple[str, str, str]] = []
        self._open: list[list[str]] = []

    def handle_starttag(self, tag, attrs):
        if tag == "a":
            a = dict(attrs)
            self._open.append([a.get("href") or "", a.get("class") or "", ""])

    def handle_data(self, data):
        for a in self._open:
            a[2] += data

    def handle_endtag(self, tag):
        if tag == "a" and self._open:
            href, cls, text = self._open.pop()
            self.found.append((href, cls, " ".join(text.split())))


def _anchors_of(site: Path, page: str) -> list[tuple[str, str, str]]:
    """The links of the built page at URL ``page`` (``""`` is the home page) to pages of the
    site, each as (the address it names, relative to the site's root; its class; its text)."""
    parser = _Anchors()
    parser.feed((site / page / "index.html").read_text())
    base = "http://site/" + page
    return [(urljoin(base, href).removeprefix("http://site/").split("#")[0], cls, text)
            for href, cls, text in parser.found if not re.match(r"^(#|[a-z][a-z0-9+.-]*:)", href)]


def _url(page: str) -> str:
    """The URL MkDocs gives the page at ``page`` under docs/ (directory URLs)."""
    stem = page.removesuffix(".md")
    if stem in ("index", "README") or stem.endswith(("/index", "/README")):
        return stem.rpartition("/")[0] + "/" if "/" in stem else ""
    return stem + "/"


def _nav(site: Path) -> dict[str, str]:
    """The site's nav, as the home page shows it: address -> title."""
    return {href: text for href, cls, text in _anchors_of(site, "") if "md-nav__link" in cls.split()}


def _journal_entries(docs: Path) -> dict[str, str]:
    """The journal's entries in ``docs``: file name -> title (its first heading, without code
    marks and without a leading date of its own)."""
    entries = {}
    for md in sorted((docs / "journal").glob("2*.md")):
        text = re.sub(r"^```.*?^```", "", md.read_text(), flags=re.M | re.S)
        heading = re.search(r"^#{1,6}\s+(.+?)(?:\s+#+)?\s*$", text, re.M).group(1)
        entries[md.name] = heading.replace("`", "").removeprefix(md.name[:10] + ":").strip()
    return entries


def journal_problems(site: Path, docs: Path) -> list[str]:
    """Each journal entry of ``docs`` missing from the built site's nav or from its journal
    index (the links of journal/README.md's page), or listed there under another title
    than its first heading; and the index not newest first."""
    nav = _nav(site)
    index = [(href, text) for href, cls, text in _anchors_of(site, "journal/")
             if not cls and href.startswith("journal/2")]
    listed = dict(index)
    problems = []
    for name, title in _journal_entries(docs).items():
        url = _url(f"journal/{name}")
        if nav.get(url) != f"{name[:10]}: {title}":
            problems.append(f"{name}: nav has {nav.get(url)!r}, not {name[:10]}: {title!r}")
        if listed.get(url) != title:
            problems.append(f"{name}: the journal's index has {listed.get(url)!r}, not {title!r}")
    if [href for href, _ in index] != sorted((href for href, _ in index), reverse=True):
        problems.append("the journal's index is not newest first")
    return problems


def test_the_site_builds_in_strict_mode(built_site):
    """`mkdocs build --strict`: a broken link or anchor between pages, or a page missing, fails
    it. Skipped, naming mkdocs, where it is not installed (fails under
    ROUTERLAB_REQUIRE_ENGINES=1). Its pages name their address under site_url."""
    r, site = built_site
    assert r.returncode == 0, r.stdout + r.stderr
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    assert config["docs_dir"] == "docs" and config.get("strict") is True
    home = (site / "index.html").read_text()
    assert f'<link rel="canonical" href="{config["site_url"]}">' in home


def test_the_nav_lists_every_page(built_site):
    """Every page of docs/ is in the built site's nav (a page left out is built but not
    found), the journal's entries among them."""
    r, site = built_site
    assert r.returncode == 0, r.stdout + r.stderr
    nav = _nav(site)
    missing = [p.relative_to(DOCS).as_posix() for p in sorted(DOCS.rglob("*.md"))
               if _url(p.relative_to(DOCS).as_posix()) not in nav]
    assert missing == [], "pages missing from the site's nav"


def test_the_journal_lists_its_folder(built_site):
    """Every entry of docs/journal/ is in the site's nav and in the journal's index, under
    its first heading, newest first."""
    r, site = built_site
    assert r.returncode == 0, r.stdout + r.stderr
    assert journal_problems(site, DOCS) == []


def test_a_new_journal_entry_needs_no_list_edited(tmp_path):
    """An entry added to the folder alone is in the built nav and index (scripts/mkdocs_journal.py
    makes both from the folder); the check reports an entry the site does not list."""
    _require_mkdocs()
    shutil.copy(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    shutil.copytree(ROOT / "scripts", tmp_path / "scripts")
    shutil.copytree(DOCS, tmp_path / "docs")
    (tmp_path / "docs" / "journal" / "2099-12-31-a-new-entry.md").write_text(
        "# A `new` entry: written today\n\nWhat was measured.\n")
    r = _mkdocs_build(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert r.returncode == 0, r.stdout + r.stderr
    assert journal_problems(tmp_path / "site", tmp_path / "docs") == []
    assert _nav(tmp_path / "site")["journal/2099-12-31-a-new-entry/"] == "2099-12-31: A new entry: written today"
    late = tmp_path / "docs" / "journal" / "2099-12-30-after-the-build.md"
    late.write_text("# After the build\n")
    problems = journal_problems(tmp_path / "site", tmp_path / "docs")
    assert len(problems) == 2 and all(p.startswith(late.name) for p in problems), problems


def test_the_site_is_addressed_from_the_repository():
    """mkdocs.yml's repo_url is pyproject.toml's [project.urls] Repository (the one place it is
    kept) and its site_url that repository's GitHub Pages address."""
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    repo = _repository()
    owner, name = repo.removeprefix("https://github.com/").split("/")
    assert config["repo_url"].rstrip("/") == repo
    assert config["repo_name"] == f"{owner}/{name}"
    assert config["site_url"] == f"https://{owner}.github.io/{name}/"


def test_every_command_has_its_line_in_the_docs():
    """docs/commands.md names every top-level command and group of `routerlab`, and
    docs/benchmarks.md every `bench` command: a new command needs its line."""
    import click

    from routerlab.cli.app import app

    app.load()  # every command module adds its commands
    commands = (DOCS / "commands.md").read_text()
    missing = [name for name in app.commands if f"`routerlab {name}" not in commands]
    assert missing == [], "commands missing from docs/commands.md"
    benchmarks = (DOCS / "benchmarks.md").read_text()
    bench = app.commands["bench"]
    assert isinstance(bench, click.Group)
    missing = [name for name in bench.commands if not re.search(rf"`(routerlab )?bench {name}\b", benchmarks)]
    assert missing == [], "bench commands missing from docs/benchmarks.md"
    modules = {p.stem for p in (ROOT / "lib" / "routerlab" / "benchmarks").glob("*.py")} - {"__init__"}
    assert modules <= set(bench.commands), "a module of benchmarks/ with no bench command of its name"


# --- The glossary: every term linked where a page first uses it -------------------------

GLOSSARY = DOCS / "glossary.md"
#: A glossary entry's line of other forms of its term: "*Also:* form, `code form`, ...".
ALSO = re.compile(r"^\*Also:\*\s*(.+?)\.?\s*$", re.M)
#: A link `[text](target)` (its text may span lines and hold a code span or brackets).
LINK_SPAN = re.compile(r"\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\(\s*<?([^)\s>]*)>?[^)]*\)")


@dataclass(frozen=True)
class Term:
    """A glossary entry: its heading, its anchor, the forms a page may use it in, and the
    pages the entry links to (where the term is explained: they need not link it)."""

    heading: str
    anchor: str
    forms: tuple[str, ...]
    homes: frozenset[Path]


def glossary_terms(path: Path = GLOSSARY) -> list[Term]:
    """The terms of the glossary at ``path``: each `### ` heading (terms separated by
    commas) with the forms of its *Also:* line."""
    text = path.read_text()
    terms = []
    parts = re.split(r"^### +(.+?)\s*$", text, flags=re.M)
    for heading, body in zip(parts[1::2], parts[2::2]):
        body = re.split(r"^#{1,2} ", body, flags=re.M)[0]
        forms = [f.strip() for f in _split_forms(heading)]
        for also in ALSO.findall(body):
            forms += [f.strip() for f in _split_forms(also)]
        homes = set()
        for _, target in LINK_SPAN.findall(body):
            page = target.partition("#")[0]
            if page.endswith(".md") and not re.match(r"^[a-z]+:", page):
                homes.add((path.parent / page).resolve())
        terms.append(Term(heading, _slug(heading), tuple(f for f in forms if f), frozenset(homes)))
    return terms


def _split_forms(text: str) -> list[str]:
    """Comma-separated forms, a comma inside a code span kept."""
    return [m.group(0) for m in re.finditer(r"(?:`[^`]*`|[^,`])+", text)]


def _blank(text: str, start: int, end: int) -> str:
    """``text`` with ``[start, end)`` made spaces (line breaks kept, so offsets and lines hold)."""
    return text[:start] + re.sub(r"[^\n]", " ", text[start:end]) + text[end:]


def _blank_all(text: str, pattern: str, flags=0) -> str:
    """``text`` with every match of ``pattern`` made spaces (:func:`_blank`)."""
    for m in reversed(list(re.finditer(pattern, text, flags))):
        text = _blank(text, m.start(), m.end())
    return text


def _views(text: str) -> tuple[str, str, list[tuple[int, int, str]]]:
    """Two views of a page, offsets kept, and its links: ``raw`` without what holds no use
    of a term (code blocks, comments and the blocks a generator marks with them, HTML,
    images, headings, link targets, addresses); ``prose``, which also blanks code spans;
    each link's text span and target."""
    raw = _blank_all(text, r"^(```|~~~).*?^\1[^\n]*$", re.M | re.S)
    raw = _blank_all(raw, r"<!--\s*([\w ]+?)\s*(?::[^>]*)?-->.*?<!--\s*/\1\s*-->", re.S)  # generated
    raw = _blank_all(raw, r"<!--.*?-->", re.S)
    raw = _blank_all(raw, r"!\[[^\]]*\]\([^)]*\)")
    raw = _blank_all(raw, r"</?[a-zA-Z][^>\n]*>")
    raw = _blank_all(raw, r"^#{1,6} .*$", re.M)
    links = [(m.start(1), m.end(1), m.group(2)) for m in LINK_SPAN.finditer(raw)]
    for _, end, _ in reversed(links):
        raw = _blank(raw, end + 1, raw.index(")", end) + 1)  # `(target)`: not a use
    raw = _blank_all(raw, r"<?https?://[^\s>]+>?")
    prose = _blank_all(raw, r"`[^`\n]+`")
    return raw, prose, links


def _form_pattern(form: str) -> tuple[re.Pattern, bool]:
    """A form's pattern and whether it is matched inside code spans (a form that is one
    code span) rather than in prose. Prose forms match whole words and their plural (a
    single letter's only as it is); the case is the form's, except that a form in lower case
    matches with a capital too (at a sentence's start)."""
    if re.fullmatch(r"`[^`]+`", form):
        inner = form[1:-1]
        pre = r"(?<![\w-])" if re.match(r"[\w-]", inner) else ""
        post = r"(?![\w])" if re.search(r"\w$", inner) else ""
        return re.compile(pre + re.escape(inner) + post), True
    pieces = re.split(r"(`[^`]+`)", form)
    out = []
    for i, piece in enumerate(pieces):
        if not piece:
            continue
        if piece.startswith("`"):
            out.append(re.escape(piece))
            continue
        words = [re.escape(w) for w in piece.split()]
        if i == 0 and words and len(piece.strip()) > 1 and piece[0].islower():
            words[0] = f"[{piece[0]}{piece[0].upper()}]" + words[0][1:]
        out.append((r"\s+" if piece[0].isspace() else "") + r"\s+".join(words)
                   + (r"\s+" if piece[-1].isspace() else ""))
    body = "".join(out)
    pre = r"(?<![\w`-])" if re.match(r"\w", form) else ""
    plural = r"(?:e?s)?" if len(form) > 1 else ""
    post = plural + r"(?![\w`])" if re.search(r"\w$", form) else ""
    return re.compile(pre + body + post), False


def _uses(term: Term, raw: str, prose: str) -> list[re.Match]:
    """Every match of the term's forms, in page order: code forms inside code spans of
    ``raw``, mixed forms (prose and code) in ``raw``, prose forms in ``prose``."""
    found = []
    for form in term.forms:
        pattern, in_code = _form_pattern(form)
        if in_code:
            for span in re.finditer(r"`([^`\n]+)`", raw):
                found += pattern.finditer(raw, span.start(1), span.end(1))
        else:
            found += pattern.finditer(raw if "`" in form else prose)
    return sorted(found, key=lambda m: m.start())


def glossary_link_problems(md: Path, terms: list[Term], glossary: Path = GLOSSARY) -> list[str]:
    """For each glossary term ``md`` uses, its first use (outside headings, code blocks,
    link targets and the text of links to other pages, which names them) must be the text
    of a link to its glossary entry (or to a longer term's entry that holds it, or to a page
    the entry names), or be emphasised (``*term*``: the page defines it there), unless
    ``md`` is itself a page the entry names. One line per term that is not: page, line,
    term."""
    text = md.read_text()
    raw, prose, links = _views(text)
    emphasis = [(m.start(), m.end()) for m in re.finditer(r"(\*\*?)[^*\n]+\1", raw)]
    here = md.resolve()
    problems = []
    for term in terms:
        if here in term.homes or here == glossary.resolve():
            continue
        for m in _uses(term, raw, prose):
            link = next(((s, e, t) for s, e, t in links if s <= m.start() and m.end() <= e), None)
            if link:
                path, _, anchor = link[2].partition("#")
                dest = (md.parent / path).resolve() if path else here
                if dest == glossary.resolve():
                    ok = anchor == term.anchor or link[1] - link[0] > m.end() - m.start()
                elif dest in term.homes:
                    ok = True
                else:
                    continue  # the title of another page, not a use of the term here
            else:
                ok = any(s <= m.start() and m.end() <= e for s, e in emphasis)
            if not ok:
                line = text.count("\n", 0, m.start()) + 1
                name = md.relative_to(ROOT) if md.is_relative_to(ROOT) else md.name
                problems.append(f"{name}:{line}: {' '.join(m.group(0).split())!r} ({term.heading}) is first "
                                f"used without a link to glossary.md#{term.anchor}")
            break
    return problems


# --- Constants the docs quote: the code's own values --------------------------------------

#: A constant named in the docs: `module.NAME` (or `folder/module.NAME`,
#: `routerlab.folder.module.NAME`).
CONSTANT = re.compile(r"`((?:routerlab\.)?[a-z_][\w/.]*)\.([A-Z][A-Z0-9_]*)`")
#: A number as the docs write it: 0.5, 2,000, 1e-6, 99.5% (a percentage).
NUMBER = re.compile(r"(?<![\w.])(\d+(?:,\d{3})*(?:\.\d+)?(?:e-?\d+)?)\s*(%?)")


def _module_of(name: str):
    """The module a doc's ``module``, ``folder/module`` or ``routerlab.folder.module`` names
    (a bare module name must be the only module of routerlab by that name)."""
    import importlib

    if name.startswith("routerlab."):
        return importlib.import_module(name)
    lib = ROOT / "lib" / "routerlab"
    if "/" in name or "." in name:
        return importlib.import_module("routerlab." + name.replace("/", "."))
    found = sorted(p for p in lib.rglob(f"{name}.py") if "__pycache__" not in p.parts)
    if len(found) != 1:
        raise LookupError(f"{len(found)} modules of routerlab are named {name}: write folder/{name}")
    return importlib.import_module("routerlab." + ".".join(found[0].relative_to(lib).with_suffix("").parts))


def _numbers(value) -> list[float]:
    """A constant's value as the numbers it holds, in order (a string's numbers, a tuple's
    items)."""
    if isinstance(value, bool):
        return []
    if isinstance(value, (int, float)):
        return [float(value)]
    if isinstance(value, str):
        return [float(n.replace(",", "")) for n, _ in NUMBER.findall(value)]
    if isinstance(value, (tuple, list)):
        return [x for v in value for x in _numbers(v)]
    return []


def quoted_constant_problems(md: Path) -> list[str]:
    """Every constant ``md`` quotes with its value, `module.NAME` (VALUE), checked against
    the code: VALUE's numbers (a percentage divided by 100) must be the constant's, in
    order. A constant followed by its value in any other way (`module.NAME`, 3) is
    reported too, so that every quoted value is one this check reads."""
    text = md.read_text()
    problems = []
    for m in CONSTANT.finditer(text):
        module, name = m.groups()
        line_no = text.count("\n", 0, m.start()) + 1
        where = f"{md.relative_to(ROOT) if md.is_relative_to(ROOT) else md.name}:{line_no}: `{module}.{name}`"
        rest = text[m.end():]
        if re.match(r"[,:]\s*\d", rest):
            problems.append(f"{where}: its value follows it unmarked; write `{module}.{name}` (VALUE)")
            continue
        marked = re.match(r"\s+\(([^)]*)\)", rest)
        quoted = [float(n.replace(",", "")) / (100 if pct else 1)
                  for n, pct in NUMBER.findall(marked.group(1))] if marked else []
        if not quoted:
            continue
        try:
            value = getattr(_module_of(module), name)
        except (ImportError, LookupError, AttributeError) as e:
            problems.append(f"{where}: no such constant ({e})")
            continue
        code = _numbers(value)
        if len(code) != len(quoted) or any(abs(a - b) > 1e-9 * max(1.0, abs(b)) for a, b in zip(quoted, code)):
            problems.append(f"{where}: the doc says ({' '.join(marked.group(1).split())}), the code {value!r}")
    return problems


def _pages() -> list[Path]:
    """The README and the site's pages (the journal's dated records are not among them:
    they say what was, in the words of their day)."""
    return [README, *sorted(DOCS.glob("*.md"))]


def test_every_glossary_term_is_linked_where_a_page_first_uses_it():
    """On the README and every page, a glossary term's first use links to its entry (or the
    page defines it): the terms are the glossary's own headings and *Also:* forms."""
    terms = glossary_terms()
    anchors = {t.anchor for t in terms}
    # the terms the docs once used before defining them are entries now
    assert {"exec-engine", "live-xdp-frames", "bpf_prog_run", "rlgen", "af_packet", "scenario-names",
            "100ge-tables", "campaign", "saturation-point-saturation-load", "guard-table", "rps"} <= anchors
    problems = [p for md in _pages() for p in glossary_link_problems(md, terms)]
    assert problems == [], "\n".join(problems)


def test_the_glossary_check_can_fail(tmp_path):
    """A term used without a link is reported with its page and line; a use in a heading, a
    code block, a code span (for a prose form) or another page's link title is not a use; a
    link to the entry, to a page the entry names, or an emphasised first use passes."""
    glossary = tmp_path / "glossary.md"
    glossary.write_text("# Glossary\n\n### widget\n\n*Also:* `--widget`, gizmo.\n\nA thing ([Widgets](widgets.md)).\n\n"
                        "### Foo Bar\n\nAnother.\n")
    terms = glossary_terms(glossary)
    assert [(t.anchor, t.forms) for t in terms] == [("widget", ("widget", "`--widget`", "gizmo")),
                                                    ("foo-bar", ("Foo Bar",))]
    page = tmp_path / "page.md"
    page.write_text("# Widgets and Foo Bar\n\n```\nwidget Foo Bar\n```\n\n"
                    "See [all widgets](other.md); `widget` is code.\n\nThe Widgets here\nand a Foo\nBar.\n")
    assert glossary_link_problems(page, terms, glossary) == [
        "page.md:9: 'Widgets' (widget) is first used without a link to glossary.md#widget",
        "page.md:10: 'Foo Bar' (Foo Bar) is first used without a link to glossary.md#foo-bar"]
    page.write_text("Run `x --widget`, then *Foo Bar*.\n")
    assert glossary_link_problems(page, terms, glossary) == [
        "page.md:1: '--widget' (widget) is first used without a link to glossary.md#widget"]
    page.write_text("Run [`x --widget`](glossary.md#widget) or a [gizmo](widgets.md); a foo bar.\n")
    assert glossary_link_problems(page, terms, glossary) == []
    home = tmp_path / "widgets.md"
    home.write_text("A widget, unlinked: this is the page the entry names.\n")
    assert glossary_link_problems(home, terms, glossary) == []


def test_every_constant_the_docs_quote_is_the_codes():
    """A constant the README or a page quotes with its value, `module.NAME` (VALUE), has that
    value in the code; none is quoted in another form."""
    problems = [p for md in _pages() for p in quoted_constant_problems(md)]
    assert problems == [], "\n".join(problems)


def test_the_constant_check_can_fail(tmp_path):
    """A drifted value, a value quoted unmarked and a constant the code does not have are
    each reported; a matching value (a percentage, a list, a string of numbers) is not."""
    page = tmp_path / "page.md"
    page.write_text("Up to `defaults.MAX_REPEATS` (4) times; `traffic.STEAL_FLAG` (2%);\n"
                    "`defaults.CALIBRATION_FRACTIONS` (0.02, 0.04 and 0.06); `idle.LOADS_FRAC` (0.04,\n"
                    "0.1 and 0.2); `defaults.SEARCH_REPEATS`, 3; `defaults.NO_SUCH_THING` (1);\n"
                    "`defaults.ETA` (the tolerance) names it without a value.\n")
    problems = quoted_constant_problems(page)
    assert len(problems) == 3, problems
    assert problems[0].startswith("page.md:1: `defaults.MAX_REPEATS`: the doc says (4), the code 3")
    assert problems[1].startswith("page.md:3: `defaults.SEARCH_REPEATS`: its value follows it unmarked")
    assert problems[2].startswith("page.md:3: `defaults.NO_SUCH_THING`: no such constant")
