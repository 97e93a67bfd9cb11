"""The library's import graph has no circle: every import between routerlab's own
modules, at the top of a module or inside a function, goes one way."""

import ast
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


@pytest.mark.parametrize("low", ["routerlab.stats", "routerlab.errors", "routerlab.scenarios", "routerlab.testbed"])
def test_lower_layers_import_no_engine(low):
    assert not {m for m in graph()[low] if m.startswith("routerlab.engines")}


def test_notebook_defaults_are_the_library_defaults():
    """Papermill needs literals in a parameters cell: they must equal the one definition."""
    from routerlab import notebooks, stats

    want = {"pdr": stats.PDR_FRACTION, "eta": stats.ETA, "entry_multiplier": stats.ENTRY_MULTIPLIER,
            "plr_floor": stats.PLR_FLOOR}
    seen = 0
    for nb in notebooks.list_notebooks():
        for name, p in notebooks.parameters_of(nb).items():
            if name in want:
                assert float(p["default"]) == want[name], f"{nb.name}: {name} = {p['default']}"
                seen += 1
    assert seen >= 4


#: The layers of docs/architecture.md, lowest first; a module imports only its own layer
#: or lower ones.
LAYERS = [
    {"errors", "defaults", "cache"},
    {"stats", "datasets", "pastrami", "plots", "synthetic", "scenarios"},
    {"testbed", "traffic", "probe", "netlink_routes"},
    {"engines"},
    {"measuring", "sweep", "search", "validation", "drops", "comparison", "fastreroute", "microbench", "benchmarks",
     "p4exercises", "doctor", "checks", "clickexercises"},
    {"notebooks"},
    {"cli"},
]


def layer(module: str) -> int | None:
    top = module.split(".")[1] if module.count(".") else ""
    return next((i for i, names in enumerate(LAYERS) if top in names), None)


def test_each_layer_imports_only_its_own_or_lower_ones():
    g = graph()
    wrong = [f"{m} -> {d}" for m, deps in g.items() for d in deps
             if layer(m) is not None and layer(d) is not None and layer(d) > layer(m)]
    assert not wrong, wrong
    placed = {m.split(".")[1] for m in g if m.count(".")}
    assert placed <= set().union(*LAYERS), f"modules in no layer: {placed - set().union(*LAYERS)}"


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
