"""Set-up and release files agree with each other: pyproject, environment.yml, README and
CI; CITATION.cff, CHANGELOG.md, the git tags, LICENSE and NOTICE, and the wheel's metadata."""

import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest
import yaml

from routerlab.version import RELEASE_TAGS

ROOT = Path(__file__).resolve().parents[1]


def _norm(req: str) -> str:
    return re.sub(r"\s+", "", req).lower()


def setup_extras(setup_sh: str) -> list[str]:
    """The extras of pyproject.toml that scripts/setup.sh installs with routerlab
    (``pip install -e '.[EXTRA,...]'``)."""
    found = re.findall(r"pip install\b[^\n]*\s-e\s+['\"]?\.\[([\w\s,-]+)\]", setup_sh)
    assert len(found) == 1, "scripts/setup.sh installs routerlab once, as pip install -e '.[EXTRA,...]'"
    return [e.strip() for e in found[0].split(",")]


def environment_mismatch(env: dict, project: dict, extras: list[str]) -> tuple[set[str], set[str]]:
    """What environment.yml's pip list lacks of routerlab's dependencies and ``extras``, and
    what it has beyond them."""
    wanted = {_norm(r) for r in project["dependencies"]}
    for extra in extras:
        wanted |= {_norm(r) for r in project["optional-dependencies"][extra]}
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    have = {_norm(r) for r in pip if not r.startswith("-e")}
    return wanted - have, have - wanted


def test_environment_yml_matches_pyproject_and_setup():
    """environment.yml installs what scripts/setup.sh does into .venv: routerlab (editable),
    its dependencies and the extras setup.sh names, each with pyproject.toml's bound."""
    pj = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = setup_extras((ROOT / "scripts" / "setup.sh").read_text())
    assert set(extras) <= set(pj["optional-dependencies"]), "setup.sh names an extra pyproject.toml lacks"
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    assert environment_mismatch(env, pj, extras) == (set(), set())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    assert "-e ." in pip
    assert "python=3.11" in env["dependencies"]


def test_the_environment_check_can_fail():
    """An extra setup.sh installs that environment.yml lacks, and a package environment.yml
    has beyond pyproject.toml, are each reported."""
    project = {"dependencies": ["numpy>=1.26"],
               "optional-dependencies": {"docs": ["mkdocs>=1.6"], "tutorials": ["ptf>=0.10"]}}
    extras = setup_extras(".venv/bin/python -m pip install -q -e '.[docs, tutorials]'\n")
    assert extras == ["docs", "tutorials"]
    env = {"dependencies": ["python=3.11", "pip", {"pip": ["numpy>=1.26", "mkdocs>=1.6", "ptf>=0.9", "-e ."]}]}
    assert environment_mismatch(env, project, extras) == ({"ptf>=0.10"}, {"ptf>=0.9"})
    env["dependencies"][2]["pip"].remove("ptf>=0.9")
    assert environment_mismatch(env, project, ["docs"]) == (set(), set())
    with pytest.raises(AssertionError, match="installs routerlab once"):
        setup_extras("pip install -e .\n")


def test_every_dependency_has_a_lower_bound():
    pj = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    for req in pj["dependencies"] + [r for extra in pj["optional-dependencies"].values() for r in extra]:
        assert ">=" in req, req


def _readme_block(title: str) -> str:
    text = (ROOT / "README.md").read_text()
    m = re.search(rf"{title}.*?```(?:bash|sh)?\n(.*?)```", text, re.S)
    assert m, f"README has no code block after {title!r}"
    return m.group(1).strip()


def test_ci_runs_the_readme_test_command():
    block = _readme_block("Set up and run")
    commands = [ln.split("#")[0].strip() for ln in block.splitlines()]
    assert commands == ["make figures", "make test"]
    ci = [ln.strip() for ln in (ROOT / ".ci" / "run").read_text().splitlines()]
    assert "make test" in ci
    make = (ROOT / "Makefile").read_text()
    figures = make.split("\nfigures:", 1)[1].split("\n\n", 1)[0]
    assert "routerlab figures" in figures
    test = make.split("\ntest:", 1)[1].split("\n\n", 1)[0]
    assert "ROUTERLAB_REQUIRE_ENGINES=1" in test and "pytest" in test
    engines = make.split("\nengines:", 1)[1].split("\n\n", 1)[0]
    assert "routerlab engines install" in engines and "engines" in test.splitlines()[0]


def test_setup_bundles_the_folders_the_package_names(monkeypatch):
    """setup.py reads datasets.BUNDLED from its source (it cannot import the package while
    building it): one list of the bundled folders."""
    import runpy

    import setuptools

    from routerlab.analysis import datasets

    monkeypatch.setattr(setuptools, "setup", lambda **kw: None)
    assert runpy.run_path(str(ROOT / "setup.py"))["bundled"]() == datasets.BUNDLED


def citation() -> dict:
    """CITATION.cff, its dates as strings: the format's schema asks tools to cast YAML's
    dates so before validating."""
    import datetime

    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    return {k: v.isoformat() if isinstance(v, datetime.date) else v for k, v in cff.items()}


def test_citation_cff_is_valid_and_names_this_licence_and_repository():
    """CITATION.cff against the Citation File Format 1.2.0 schema (tests/data, from the
    format's repository as cffconvert 2.0.0 ships it, which checks the same), with
    jsonschema; its licence is in pyproject.toml's expression, its repository is
    pyproject.toml's."""
    import json

    import jsonschema

    cff = citation()
    schema = json.loads((ROOT / "tests" / "data" / "cff-1.2.0.schema.json").read_text())
    jsonschema.Draft7Validator(schema, format_checker=jsonschema.FormatChecker()).validate(cff)
    pj = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert cff["license"] == "Apache-2.0" and cff["license"] in pj["license"].split()
    assert cff["repository-code"] == pj["urls"]["Repository"]
    assert cff["date-released"] and cff["version"]
    broken = {k: v for k, v in cff.items() if k != "authors"}
    with pytest.raises(jsonschema.ValidationError, match="authors"):
        jsonschema.Draft7Validator(schema).validate(broken)
    undated = {**cff, "date-released": "6 December 2026"}
    with pytest.raises(jsonschema.ValidationError, match="date-released|does not match"):
        jsonschema.Draft7Validator(schema, format_checker=jsonschema.FormatChecker()).validate(undated)


def changelog_releases(text: str) -> list[tuple[str, str]]:
    """The releases a Keep a Changelog file lists, newest first: (version, date) of each
    ``## [X.Y.Z] - YYYY-MM-DD`` heading (``[Unreleased]`` is not one)."""
    return re.findall(r"^## \[(\d+(?:\.\d+)*)\] - (\d{4}-\d{2}-\d{2})\s*$", text, re.M)


def release_tags(root: Path, ref: str = "HEAD") -> list[str]:
    """The release tags (vX.Y.Z) ``ref`` descends from, oldest first (empty without git)."""
    from packaging.version import Version

    if shutil.which("git") is None or not (root / ".git").exists():
        return []
    out = subprocess.run(["git", "-C", str(root), "tag", "--merged", ref, "--list", RELEASE_TAGS],
                         capture_output=True, text=True, check=True).stdout.split()
    return sorted(out, key=lambda tag: Version(tag[1:]))


def release_problems(version: str, date: str, changelog: str, tags: list[str], head_tags: list[str]) -> list[str]:
    """Why CITATION.cff's ``version`` and ``date`` are not the release's, one sentence each:
    not the changelog's newest release and its date; older than the last tag; newer than it
    while HEAD carries a tag (a release is being prepared only on an untagged commit); or
    HEAD tagged for another release."""
    from packaging.version import Version

    problems = []
    releases = changelog_releases(changelog)
    if not releases or releases[0] != (version, date):
        problems.append(f"CHANGELOG.md's newest release is {releases[0] if releases else None}, "
                        f"not CITATION.cff's ({version}, {date})")
    if tags:
        last = Version(tags[-1][1:])
        if Version(version) < last:
            problems.append(f"CITATION.cff names {version}, older than the last tag {tags[-1]}")
        elif Version(version) > last and head_tags:
            problems.append(f"CITATION.cff names {version}, but HEAD is tagged {', '.join(head_tags)}")
    other = [t for t in head_tags if t != f"v{version}"]
    if other:
        problems.append(f"HEAD is tagged {', '.join(other)}, not v{version} (CITATION.cff's version)")
    return problems


def test_citation_names_the_release_the_changelog_and_the_tag_name():
    """CITATION.cff's version and date are CHANGELOG.md's newest release; the last tag
    vX.Y.Z is that release, or an older one while the next is prepared (no tag on HEAD yet)."""
    cff = citation()
    head = (subprocess.run(["git", "-C", str(ROOT), "tag", "--points-at", "HEAD", "--list", RELEASE_TAGS],
                           capture_output=True, text=True).stdout.split() if release_tags(ROOT) else [])
    assert release_problems(cff["version"], cff["date-released"], (ROOT / "CHANGELOG.md").read_text(),
                            release_tags(ROOT), head) == []


def test_release_problems_can_fail():
    log = "# Changelog\n\n## [Unreleased]\n\n## [0.2.0] - 2027-03-01\n\n## [0.1.0] - 2026-12-06\n"
    assert changelog_releases(log) == [("0.2.0", "2027-03-01"), ("0.1.0", "2026-12-06")]
    assert release_problems("0.2.0", "2027-03-01", log, ["v0.1.0"], []) == []  # being prepared
    assert release_problems("0.2.0", "2027-03-01", log, ["v0.1.0", "v0.2.0"], ["v0.2.0"]) == []
    assert "older than the last tag" in release_problems("0.2.0", "2027-03-01", log, ["v0.3.0"], [])[0]
    assert "CHANGELOG.md's newest" in release_problems("0.1.0", "2026-12-06", log, ["v0.1.0"], [])[0]
    assert "not v0.2.0" in release_problems("0.2.0", "2027-03-01", log, ["v0.1.0", "v0.2.1"], ["v0.2.1"])[-1]
    assert "HEAD is tagged v0.1.0" in release_problems("0.2.0", "2027-03-01", log, ["v0.1.0"], ["v0.1.0"])[0]


def _person(author: dict) -> str:
    return author.get("name") or f"{author.get('given-names', '')} {author.get('family-names', '')}".strip()


def references_by_title(references: list[dict]) -> dict[str, dict]:
    """CITATION.cff's references by title; a title given twice fails (the second would
    silently take the first's place)."""
    titles = [r["title"] for r in references]
    twice = sorted({t for t in titles if titles.count(t) > 1})
    assert not twice, f"CITATION.cff lists {', '.join(twice)} more than once"
    return {r["title"]: r for r in references}


def test_citation_references_every_publication_of_the_figure_sets():
    """Every publication of data/sources.yaml with a title is among CITATION.cff's
    references, once, with its authors, year, DOI and address as sources.yaml has them (a
    source with no title is not one a citation can name); where sources.yaml found no
    authors, none is guessed: the reference names only an entity (CFF requires one)."""
    from routerlab.analysis import citations

    refs = references_by_title(citation()["references"])
    for source in citations.catalogue().sources.values():
        if source.title is None:
            continue
        assert source.title in refs, f"CITATION.cff's references lack {source.key!r} ({source.title})"
        ref = refs[source.title]
        if source.authors:
            assert [_person(a) for a in ref["authors"]] == list(source.authors), source.key
        if "authors" in source.missing:
            people = [a for a in ref["authors"] if "name" not in a]
            assert not people, f"{source.key}: sources.yaml found no authors, CITATION.cff names {people}"
        assert (ref.get("year"), ref.get("doi"), ref.get("url")) == (source.year, source.doi, source.url), source.key


def test_a_reference_given_twice_fails():
    refs = [{"title": "A", "year": 1}, {"title": "B"}, {"title": "A", "year": 2}]
    with pytest.raises(AssertionError, match="lists A more than once"):
        references_by_title(refs)
    assert set(references_by_title(refs[:2])) == {"A", "B"}


def test_licence_and_notice():
    """LICENSE is the Apache License 2.0 as Debian ships it, word for word; NOTICE names
    the copyright holder and every file of the package that is under another licence."""
    text = (ROOT / "LICENSE").read_text()
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    debian = Path("/usr/share/common-licenses/Apache-2.0")
    if debian.is_file():
        assert text == debian.read_text()
    gpl = (ROOT / "LICENSES" / "GPL-2.0-only.txt").read_text()
    assert "GNU GENERAL PUBLIC LICENSE" in gpl and "Version 2, June 1991" in gpl
    if Path("/usr/share/common-licenses/GPL-2").is_file():
        assert gpl == Path("/usr/share/common-licenses/GPL-2").read_text()
    notice = (ROOT / "NOTICE").read_text()
    assert "Copyright 2026 The routerlab developers" in notice
    assert "LICENSES/GPL-2.0-only.txt" in " ".join(notice.split())
    for path in foreign_licensed(ROOT / "lib" / "routerlab"):
        assert path.name in notice, f"NOTICE does not name {path}, which is {spdx_of(path)}"


def spdx_of(path: Path) -> str | None:
    """The SPDX-License-Identifier a file states in its first lines, if any."""
    head = path.read_text(errors="replace").splitlines()[:5]
    found = [m.group(1).strip() for line in head if (m := re.search(r"SPDX-License-Identifier:\s*(.+?)\s*(\*/)?$", line))]
    return found[0] if found else None


def foreign_licensed(folder: Path) -> list[Path]:
    """Files under ``folder`` that state a licence other than Apache-2.0."""
    return sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix in {".c", ".h", ".py", ".cc", ".hh", ".p4"}
                  and spdx_of(p) not in (None, "Apache-2.0"))


def _release_script() -> dict:
    import runpy

    return runpy.run_path(str(ROOT / "scripts" / "release.py"))


def test_the_wheel_names_its_licences_and_its_version(wheel):
    """The wheel pip builds from this tree: its metadata names Apache-2.0 and carries
    LICENSE and NOTICE (scripts/release.py's check), its licence expression covers every
    licence a file it carries states, every licence of the expression has its text in the
    wheel, and its version is the last tag's release (at the tag itself, with no change
    since, that release exactly)."""
    import zipfile

    from packaging.version import Version

    release = _release_script()
    assert release["metadata_problems"](wheel) == []
    meta = release["read_metadata"](wheel)
    expression = set(re.split(r"[\s()]+", meta["License-Expression"])) - {"AND", "OR", ""}
    with zipfile.ZipFile(wheel) as z:
        stated = {m.group(1).strip() for n in z.namelist() if n.endswith((".c", ".py", ".cc", ".hh", ".p4"))
                  for line in z.read(n).decode(errors="replace").splitlines()[:5]
                  if (m := re.search(r"SPDX-License-Identifier:\s*([\w.+-]+)", line))}
        texts = {n.split(".dist-info/licenses/", 1)[1]: z.read(n).decode()
                 for n in z.namelist() if ".dist-info/licenses/" in n}
    # GPL-2.0 is SPDX's old name of GPL-2.0-only
    assert {"GPL-2.0-only" if s == "GPL-2.0" else s for s in stated} <= expression, (stated, expression)
    # the text of each licence the expression names, as the clone has it (its heading)
    headings = {"Apache-2.0": "Apache License", "GPL-2.0-only": "GNU GENERAL PUBLIC LICENSE"}
    assert expression == set(headings), expression
    for licence, heading in headings.items():
        path = release["LICENCE_TEXTS"][licence]
        assert texts.get(path) == (ROOT / path).read_text() and heading in texts[path][:200], licence
    version = Version(meta["Version"])
    tags = release_tags(ROOT)
    if not tags:
        # no release yet: setuptools-scm's development version, or a tree without git's fallback
        assert version.is_devrelease or meta["Version"] == "0+unknown", version
        return
    assert version.release == Version(tags[-1][1:]).release, (version, tags[-1])
    if not release["head_problems"](tags[-1][1:]):
        assert str(version) == tags[-1][1:]


def test_metadata_problems_are_named(tmp_path):
    """A wheel with another licence, no NOTICE and another version is refused, each in a
    sentence."""
    import zipfile

    release = _release_script()
    whl = tmp_path / "routerlab-0.1.0-py3-none-any.whl"
    with zipfile.ZipFile(whl, "w") as z:
        z.writestr("routerlab-0.1.0.dist-info/METADATA",
                   "Metadata-Version: 2.4\nName: routerlab\nVersion: 0.1.0\nLicense-Expression: MIT\n"
                   "License-File: LICENSE\nDescription-Content-Type: text/markdown\n\nREADME\n")
        z.writestr("routerlab-0.1.0.dist-info/licenses/LICENSE", "MIT\n")
    problems = release["metadata_problems"](whl, "0.2.0")
    assert len(problems) == 7, problems
    assert "not the release's '0.2.0'" in problems[0] and "does not name Apache-2.0" in problems[1]
    assert "names MIT, whose text it does not carry (routerlab keeps no text of it)" in problems[2]
    assert "no License-File NOTICE" in problems[3] and "does not carry NOTICE" in problems[4]
    assert "no License-File LICENSES/GPL-2.0-only.txt" in problems[5]
    assert "does not carry LICENSES/GPL-2.0-only.txt" in problems[6]
    assert release["metadata_problems"](whl, "0.1.0")[0].startswith(f"{whl.name}: License-Expression")
    # the expression's GPL-2.0-only without its text
    gpl = tmp_path / "gpl" / whl.name
    gpl.parent.mkdir()
    with zipfile.ZipFile(gpl, "w") as z:
        z.writestr("routerlab-0.1.0.dist-info/METADATA",
                   "Metadata-Version: 2.4\nName: routerlab\nVersion: 0.1.0\n"
                   "License-Expression: Apache-2.0 AND GPL-2.0-only\nLicense-File: LICENSE\nLicense-File: NOTICE\n"
                   "Description-Content-Type: text/markdown\n\nREADME\n")
        for name in ("LICENSE", "NOTICE"):
            z.writestr(f"routerlab-0.1.0.dist-info/licenses/{name}", name)
    problems = release["metadata_problems"](gpl, "0.1.0")
    assert problems[0] == (f"{gpl.name}: License-Expression names GPL-2.0-only, whose text it does not carry "
                           "(LICENSES/GPL-2.0-only.txt)"), problems


def test_an_interrupted_release_leaves_nothing_behind(tmp_path, monkeypatch):
    """Ctrl-C during the build: the temporary folder is gone and dist/ was not made."""
    import tempfile

    release = _release_script()
    tree, temp = tmp_path / "tree", tmp_path / "tmp"
    tree.mkdir()
    temp.mkdir()
    (tree / "CITATION.cff").write_text('version: "0.1.0"\n')
    made = []

    def interrupted(cmd, **kw):
        made.extend(temp.iterdir())
        raise KeyboardInterrupt

    scope = release["release"].__globals__
    monkeypatch.setitem(scope, "ROOT", tree)
    monkeypatch.setitem(scope, "ensure_tools", lambda: None)
    monkeypatch.setitem(scope, "run", interrupted)
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    with pytest.raises(KeyboardInterrupt):
        release["release"](snapshot=True)
    assert made and made[0].name.startswith("routerlab-release-")  # it was there while building
    assert list(temp.iterdir()) == [] and not (tree / "dist").exists()


def test_the_release_is_refused_on_an_untagged_or_changed_head(tmp_path):
    """make release builds only HEAD tagged with CITATION.cff's version, with nothing
    uncommitted."""
    if shutil.which("git") is None:
        pytest.skip("no git")
    release = _release_script()

    def git(*args):
        subprocess.run(["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
                       check=True, capture_output=True)

    git("init", "-q")
    (tmp_path / "CITATION.cff").write_text('version: "0.1.0"\n')
    git("add", "CITATION.cff")
    git("commit", "-qm", "first")
    assert release["cff_version"](tmp_path) == "0.1.0"
    assert "is not tagged v0.1.0" in release["head_problems"]("0.1.0", tmp_path)[0]
    git("tag", "v0.1.0")
    assert release["head_problems"]("0.1.0", tmp_path) == []
    (tmp_path / "CITATION.cff").write_text('version: "0.1.1"\n')
    assert "uncommitted changes" in release["head_problems"]("0.1.0", tmp_path)[0]
    git("checkout", "-q", "CITATION.cff")
    # an untracked file where the package takes its files ships in the release: refused,
    # named; an ignored one (setup.py leaves it out) and one elsewhere are not
    (tmp_path / ".gitignore").write_text("*.tmp\n")
    (tmp_path / "datasets" / "x").mkdir(parents=True)
    (tmp_path / "datasets" / "x" / "scratch.tmp").write_text("ignored\n")
    (tmp_path / "elsewhere.txt").write_text("not packaged\n")
    git("add", ".gitignore")
    git("commit", "-qm", "ignore")
    git("tag", "-f", "v0.1.0")
    assert release["head_problems"]("0.1.0", tmp_path) == []
    (tmp_path / "datasets" / "x" / "new.csv").write_text("a\n1\n")
    (tmp_path / "lib" / "routerlab").mkdir(parents=True)
    (tmp_path / "lib" / "routerlab" / "stray.py").write_text("")
    (problem,) = release["head_problems"]("0.1.0", tmp_path)
    assert "untracked files where the package takes its files" in problem
    assert "datasets/x/new.csv, lib/routerlab/stray.py" in problem and "elsewhere" not in problem
    (tmp_path / "CITATION.cff").write_text("version: next\n")
    with pytest.raises(release["ReleaseError"], match="CITATION.cff: version must be"):
        release["cff_version"](tmp_path)


def test_prepare_makes_every_notebook_name_the_release_and_the_release_checks_it(tmp_path):
    """scripts/release.py prepare: every notebook's Colab cell installs CITATION.cff's
    release and its badge opens the notebook at that tag, and docs/notebooks.md's Colab
    links follow; make release refuses a notebook of another release, naming it."""
    import json

    from routerlab.publish import notebooks

    release = _release_script()
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "docs").mkdir()
    (tmp_path / "CITATION.cff").write_text('version: "9.8.7"\n')
    for name in ("a", "b"):
        shutil.copyfile(notebooks.list_notebooks()[0], tmp_path / "notebooks" / f"{name}.ipynb")
    old = notebooks.colab_url("a", "0.0.1")
    on_main = old.replace("/blob/v0.0.1/", "/blob/main/")
    (tmp_path / "docs" / "notebooks.md").write_text(f"[![Open in Colab](x.svg)]({old}) and ({on_main})\n")
    problems = release["notebook_problems"]("9.8.7", tmp_path)
    assert any(p.startswith("a.ipynb: its first cell installs v") and p.endswith("not v9.8.7") for p in problems)
    assert any(p.startswith("b.ipynb: its Colab badge opens v") for p in problems)
    assert problems[-1].startswith("run .venv/bin/python scripts/release.py prepare")
    changed = release["prepare"](tmp_path)
    assert {p.name for p in changed} == {"a.ipynb", "b.ipynb", "notebooks.md"}
    assert release["notebook_problems"]("9.8.7", tmp_path) == []
    assert release["prepare"](tmp_path) == []
    url = notebooks.colab_url("a", "9.8.7")
    assert url.endswith("/blob/v9.8.7/notebooks/a.ipynb")
    assert (tmp_path / "docs" / "notebooks.md").read_text() == f"[![Open in Colab](x.svg)]({url}) and ({url})\n"
    book = json.loads((tmp_path / "notebooks" / "b.ipynb").read_text())
    assert "@v9.8.7\"" in "".join(book["cells"][0]["source"])
    assert notebooks.first_markdown(tmp_path / "notebooks" / "b.ipynb").startswith(notebooks.colab_badge("b", "9.8.7"))
    assert release["notebook_problems"]("9.8.8", tmp_path)[0] == "a.ipynb: its first cell installs v9.8.7, not v9.8.8"
