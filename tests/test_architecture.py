"""The library's modules are those docs/architecture.md maps, each in its layer, and its
import graph has no circle: every import between routerlab's own modules, at the top of a
module or inside a function, goes one way (downwards, through the map's layers)."""

import ast
import re
from pathlib import Path

import pytest

LIB = Path(__file__).resolve().parents[1] / "lib" / "routerlab"


def module_name(path: Path) -> str:
    parts = path.relative_to(LIB.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path, modules: set[str]) -> set[str]:
    """The routerlab modules ``path`` imports (``from . import x`` counts as module x)."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name in modules}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                target = f"{base}.{node.module}" if node.module else base
            else:
                target = node.module or ""
            for a in node.names:
                if f"{target}.{a.name}" in modules:
                    out.add(f"{target}.{a.name}")
                elif target in modules:
                    out.add(target)
    return out - {name}


def graph() -> dict[str, set[str]]:
    files = list(LIB.rglob("*.py"))
    modules = {module_name(f) for f in files}
    return {module_name(f): imports_of(f, modules) for f in files}


def cycle(g: dict[str, set[str]]) -> list[str] | None:
    """One circle of the graph, or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(n):
        state[n] = 1
        stack.append(n)
        for m in sorted(g.get(n, ())):
            if state.get(m) == 1:
                return stack[stack.index(m):] + [m]
            if m not in state:
                found = visit(m)
                if found:
                    return found
        stack.pop()
        state[n] = 2
        return None

    for n in sorted(g):
        if n not in state:
            found = visit(n)
            if found:
                return found
    return None


def test_the_import_graph_has_no_circle():
    g = graph()
    assert "routerlab.engines.click" in g["routerlab.engines"]  # the graph sees package imports
    assert cycle(g) is None, " -> ".join(cycle(g))


def test_the_cycle_finder_finds_one():
    assert cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert cycle({"a": {"b"}, "b": set()}) is None


@pytest.mark.parametrize("low", ["routerlab.analysis.stats", "routerlab.errors", "routerlab.analysis.scenarios", "routerlab.testbed"])
def test_lower_layers_import_no_engine(low):
    assert not {m for m in graph()[low] if m.startswith("routerlab.engines")}


def test_notebook_defaults_are_the_library_defaults():
    """Papermill needs literals in a parameters cell: they must equal the one definition."""
    from routerlab.publish import notebooks
    from routerlab.analysis import stats

    want = {"pdr": stats.PDR_FRACTION, "eta": stats.ETA, "entry_multiplier": stats.ENTRY_MULTIPLIER,
            "plr_floor": stats.PLR_FLOOR}
    seen = 0
    for nb in notebooks.list_notebooks():
        for name, p in notebooks.parameters_of(nb).items():
            if name in want:
                assert float(p["default"]) == want[name], f"{nb.name}: {name} = {p['default']}"
                seen += 1
    assert seen >= 4


#: The one map of the modules: every module file of lib/routerlab under its layer.
DOC = LIB.parents[1] / "docs" / "architecture.md"


def module_map(doc: Path = DOC) -> list[tuple[str, list[str]]]:
    """The layers of the map in ``doc`` ("The modules, layer by layer"), lowest first, each
    with the module files it lists (paths inside lib/routerlab)."""
    section = doc.read_text().split("\n## The modules, layer by layer\n", 1)[1].split("\n## ", 1)[0]
    layers: list[tuple[str, list[str]]] = []
    for line in section.splitlines():
        if line.startswith("### "):
            layers.append((line[4:].strip(), []))
        elif (row := re.match(r"\| `([^`]+\.py)` \|", line)):
            layers[-1][1].append(row.group(1))
    return layers[::-1]


def map_problems(doc: Path = DOC, lib: Path = LIB) -> list[str]:
    """What the map in ``doc`` gets wrong about the modules of ``lib``: a module file it
    leaves out, a name it lists with no file, a module it lists twice."""
    listed = [f for _, files in module_map(doc) for f in files]
    files = {f.relative_to(lib).as_posix() for f in lib.rglob("*.py")}
    return ([f"{f}: missing from the map in {doc}" for f in sorted(files - set(listed))]
            + [f"{f}: in the map in {doc}, but there is no such module" for f in sorted(set(listed) - files)]
            + [f"{f}: twice in the map in {doc}" for f in sorted({f for f in listed if listed.count(f) > 1})])


def upward_imports(doc: Path = DOC) -> list[str]:
    """Every import from a module into a module of a higher layer of the map in ``doc``."""
    layer = {module_name(LIB / f): i for i, (_, files) in enumerate(module_map(doc)) for f in files}
    return [f"{m} -> {d}" for m, deps in graph().items() for d in sorted(deps)
            if m in layer and d in layer and layer[d] > layer[m]]


def test_the_map_names_every_module_once_and_nothing_else(tmp_path):
    assert [name for name, _ in module_map()] == ["base", "data", "testbed", "engines", "experiments", "notebooks",
                                                   "command line"]
    assert map_problems() == []
    lines = DOC.read_text().splitlines(keepends=True)
    row = next(i for i, line in enumerate(lines) if line.startswith("| `engines/kernel.py` |"))
    doc = tmp_path / "architecture.md"
    doc.write_text("".join(lines[:row] + lines[row + 1:]))
    assert map_problems(doc) == [f"engines/kernel.py: missing from the map in {doc}"]
    doc.write_text("".join(lines[:row] + ["| `engines/gone.py` | an engine no longer here |\n"] + lines[row:]))
    assert map_problems(doc) == [f"engines/gone.py: in the map in {doc}, but there is no such module"]


def test_each_layer_imports_only_its_own_or_lower_ones(tmp_path):
    assert upward_imports() == []
    # the layers are the map's: measuring listed under base would import upwards
    text = DOC.read_text()
    row = next(line for line in text.splitlines(keepends=True) if line.startswith("| `measuring.py` |"))
    doc = tmp_path / "architecture.md"
    doc.write_text(text.replace(row, "").replace("| `errors.py` |", row + "| `errors.py` |"))
    assert "routerlab.measuring.measurement -> routerlab.engines" in upward_imports(doc)


def test_the_command_line_starts_without_the_analysis_stack():
    # `routerlab --help` and every command's start must not load numpy, pandas, scipy or
    # matplotlib: a command imports what it needs when it runs (start-up time, issue #14)
    import subprocess
    import sys

    code = ("import sys, routerlab.cli; heavy = ('numpy', 'pandas', 'scipy', 'matplotlib', 'seaborn', 'papermill'); "
            "print(' '.join(m for m in heavy if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "", f"imported at start-up: {out}"


def imported_by_routerlab(*args: str) -> set[str]:
    """The modules that ``routerlab ARGS`` imports, run as the console entry runs it (read
    from ``-X importtime``, which the entry's exit without teardown does not cut short)."""
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-X", "importtime", "-c", "from routerlab.cli import main; main()", *args],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]
    return {line.rsplit("|", 1)[1].strip() for line in r.stderr.splitlines() if line.startswith("import time:")}


def test_the_version_answers_without_the_data_layer():
    on_version = imported_by_routerlab("--version")
    assert "routerlab.version" in on_version  # the module that reads the commit is seen
    assert not on_version & {"numpy", "pandas", "scipy", "matplotlib", "routerlab.analysis.datasets"}


def test_the_command_line_runs_without_typer_or_pydantic(pastrami_sample):
    # typer converts every parameter through pydantic when a command runs, a tenth of a
    # second of every command (issue #14): the command line is click's alone
    slow = {"typer", "pydantic", "pydantic_core"}
    on_help = imported_by_routerlab("--help")
    assert "routerlab.cli.common" in on_help  # the modules the command loads are seen
    assert not on_help & (slow | {"numpy", "pandas", "scipy", "matplotlib"}), on_help & slow
    on_assess = imported_by_routerlab("assess", str(pastrami_sample), "--json")
    assert "pandas" in on_assess  # so too those a command imports when it runs
    assert not on_assess & slow
