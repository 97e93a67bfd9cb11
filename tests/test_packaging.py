"""Set-up files agree with each other: pyproject, environment.yml, README and CI."""

import re
import tomllib
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]


def _norm(req: str) -> str:
    return re.sub(r"\s+", "", req).lower()


def test_environment_yml_matches_pyproject():
    pj = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = pj["optional-dependencies"]
    wanted = {_norm(r) for r in pj["dependencies"] + extras["test"] + extras["lab"]}
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    have = {_norm(r) for r in pip if not r.startswith("-e")}
    assert have == wanted
    assert "python=3.11" in env["dependencies"]


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


def test_citation_cff_is_valid_and_names_this_version_and_repository():
    """CITATION.cff against the Citation File Format 1.2.0 schema (tests/data, from the
    format's repository as cffconvert 2.0.0 ships it), with jsonschema; its version and
    repository are pyproject.toml's."""
    import json

    import jsonschema

    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    schema = json.loads((ROOT / "tests" / "data" / "cff-1.2.0.schema.json").read_text())
    jsonschema.Draft7Validator(schema, format_checker=jsonschema.FormatChecker()).validate(cff)
    pj = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert cff["version"] == pj["version"]
    assert cff["repository-code"] == pj["urls"]["Repository"]
    broken = {k: v for k, v in cff.items() if k != "authors"}
    with pytest.raises(jsonschema.ValidationError, match="authors"):
        jsonschema.Draft7Validator(schema).validate(broken)
