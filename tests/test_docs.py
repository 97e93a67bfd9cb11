"""The README and the documentation site: the site builds with MkDocs in strict mode, every
link of the README resolves in the repository, every GitHub link of the README and docs/
names a path the repository has, and the README stays a front door."""

import importlib.util
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml
from conftest import REQUIRE_ENGINES, ROOT

README = ROOT / "README.md"
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
    return [README, *sorted(DOCS.rglob("*.md"))]


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


def test_every_relative_link_of_the_readme_resolves():
    assert relative_link_problems(README) == []


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


def test_the_nav_lists_every_page():
    """Every page of docs/ is in mkdocs.yml's nav (a page left out is built but not found),
    the journal's entries among them."""
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())

    def pages(item):
        if isinstance(item, str):
            yield item
        elif isinstance(item, list):
            for x in item:
                yield from pages(x)
        elif isinstance(item, dict):
            for x in item.values():
                yield from pages(x)

    listed = set(pages(config["nav"]))
    present = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")}
    assert present - listed == set(), "pages missing from mkdocs.yml's nav"
    assert listed - present == set(), "nav entries with no page"
    assert config["docs_dir"] == "docs" and config.get("strict") is True


def test_the_site_builds_in_strict_mode(tmp_path):
    """`mkdocs build --strict`: a broken link or anchor between pages, or a page missing, fails
    it. Skipped, naming mkdocs, where it is not installed; under ROUTERLAB_REQUIRE_ENGINES=1
    (make test, CI: scripts/setup.sh installs the `docs` extra) it fails instead."""
    missing = [m for m in ("mkdocs", "material") if importlib.util.find_spec(m) is None]
    if missing:
        reason = (f"mkdocs not installed ({', '.join(missing)} missing): "
                  "pip install -e '.[docs]' (scripts/setup.sh does)")
        if REQUIRE_ENGINES:
            pytest.fail(f"{reason} (ROUTERLAB_REQUIRE_ENGINES=1: a missing tool fails its test)", pytrace=False)
        pytest.skip(reason)
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    r = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(ROOT / "mkdocs.yml"),
                        "-d", str(tmp_path / "site")], cwd=ROOT, capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (tmp_path / "site" / "index.html").is_file()


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
