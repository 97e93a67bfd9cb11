"""Set-up files agree with each other: pyproject, environment.yml, README and CI."""

import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def _norm(req: str) -> str:
    return re.sub(r"\s+", "", req).lower()


def test_environment_yml_matches_pyproject():
    pj = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = {_norm(r) for r in pj["dependencies"] + pj["optional-dependencies"]["test"]}
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    have = {_norm(r) for r in pip if not r.startswith("-e")}
    assert have == wanted
    assert "python=3.11" in env["dependencies"]


def test_every_dependency_has_a_lower_bound():
    pj = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    for req in pj["dependencies"] + pj["optional-dependencies"]["test"]:
        assert ">=" in req, req


def _readme_block(title: str) -> str:
    text = (ROOT / "README.md").read_text()
    m = re.search(rf"{title}.*?```(?:bash|sh)?\n(.*?)```", text, re.S)
    assert m, f"README has no code block after {title!r}"
    return m.group(1).strip()


def test_ci_runs_the_readme_commands():
    ci = (ROOT / ".ci" / "run").read_text()
    setup, test = _readme_block("Set up"), _readme_block("Test")
    assert setup.splitlines()[-1] in ci
    assert test.splitlines()[-1] in ci
    assert "routerlab figures" in _readme_block("Main job")
