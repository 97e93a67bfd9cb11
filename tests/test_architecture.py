"""The library's modules are those docs/architecture.md maps, each in its layer, and its
import graph has no circle: every import between routerlab's own modules, at the top of a
module or inside a function, goes one way (downwards, through the map's layers)."""

import ast
import re
from pathlib import Path


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
    assert "routerlab.engines.registry" in g["routerlab.engines"]  # the graph sees package imports
    assert cycle(g) is None, " -> ".join(cycle(g))


def test_the_cycle_finder_finds_one():
    assert cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert cycle({"a": {"b"}, "b": set()}) is None


def test_the_layers_below_engines_import_no_engine():
    low = [m for m in graph() if m.split(".")[1:2] in (["analysis"], ["testbed"])
           or m.count(".") == 1 and (LIB / f"{m.split('.')[1]}.py").is_file()]
    assert "routerlab.analysis.stats" in low and "routerlab.testbed.traffic" in low and "routerlab.errors" in low
    assert {m: sorted(d for d in graph()[m] if d.startswith("routerlab.engines")) for m in low
            if any(d.startswith("routerlab.engines") for d in graph()[m])} == {}


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
    assert [name for name, _ in module_map()] == ["base", "analysis", "testbed", "engines", "measuring", "remote",
                                                   "benchmarks", "publish", "course", "command line"]
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
    # the layers are the map's: measurement listed under base would import upwards
    text = DOC.read_text()
    row = next(line for line in text.splitlines(keepends=True) if line.startswith("| `measuring/measurement.py` |"))
    doc = tmp_path / "architecture.md"
    doc.write_text(text.replace(row, "").replace("| `errors.py` |", row + "| `errors.py` |"))
    assert "routerlab.measuring.measurement -> routerlab.engines.registry" in upward_imports(doc)


def layer_folders(doc: Path = DOC) -> dict[str, str]:
    """Each layer's folder as the map in ``doc`` names it ("Folder: `testbed/`" under its
    heading): a path inside lib/routerlab, "" for the package's top level."""
    section = doc.read_text().split("\n## The modules, layer by layer\n", 1)[1].split("\n## ", 1)[0]
    folders, layer = {}, None
    for line in section.splitlines():
        if line.startswith("### "):
            layer = line[4:].strip()
        elif line.startswith("Folder: ") and layer is not None:
            m = re.match(r"Folder: `([a-z_]+)/`", line)
            folders[layer] = m.group(1) if m else ""
    return folders


#: Modules whose place Python sets, outside their layer's folder: ``python -m routerlab``
#: runs the package's own ``__main__``, the command line's entry.
PLACED_BY_PYTHON = {"__main__.py": "command line"}


def folder_problems(doc: Path = DOC, lib: Path = LIB) -> list[str]:
    """What the map in ``doc`` gets wrong about the folders of ``lib``: a layer without its
    folder, a module listed under a layer whose folder does not hold it, a folder of
    modules that is no layer's."""
    folders = layer_folders(doc)
    problems = [f"layer {name}: no folder named in {doc}" for name, _ in module_map(doc) if name not in folders]
    for name, files in module_map(doc):
        for f in files:
            if PLACED_BY_PYTHON.get(f) == name:
                continue
            if name in folders and str(Path(f).parent).replace(".", "") != folders[name]:
                problems.append(f"{f}: listed under {name}, whose folder is {folders[name] or 'the top level'}/")
    held = {p.parent.relative_to(lib).as_posix() for p in lib.rglob("*.py")} - {"."}
    problems += [f"{d}/: a folder of modules that is no layer's" for d in sorted(held - set(folders.values()))]
    return problems


def test_the_folders_are_the_layers(tmp_path):
    """A newcomer finds a module by its folder: each layer is one folder, and the map
    lists each module under the layer its folder is."""
    assert layer_folders() == {"command line": "cli", "course": "course", "publish": "publish",
                               "benchmarks": "benchmarks", "remote": "remote", "measuring": "measuring",
                               "engines": "engines", "testbed": "testbed", "analysis": "analysis", "base": ""}
    assert folder_problems() == []
    text = DOC.read_text()
    row = next(line for line in text.splitlines(keepends=True) if line.startswith("| `measuring/sweep.py` |"))
    doc = tmp_path / "architecture.md"
    doc.write_text(text.replace(row, "").replace("| `testbed/traffic.py` |", row + "| `testbed/traffic.py` |"))
    assert folder_problems(doc) == ["measuring/sweep.py: listed under testbed, whose folder is testbed/"]


def longest_chain(g: dict[str, set[str]]) -> list[str]:
    """The longest chain of imports in the graph ``g`` (which has no circle): a list of
    modules, each importing the next."""
    import functools

    @functools.cache
    def down(n: str) -> tuple[str, ...]:
        return max(((n,) + down(m) for m in sorted(g.get(n, ()))), key=len, default=(n,))

    return list(max((down(n) for n in sorted(g)), key=len, default=()))


#: The most modules a chain of imports may pass through, from a command down to the base.
MOST_MODULES_IN_A_CHAIN = 10


def test_no_chain_of_imports_passes_through_more_than_ten_modules():
    """A reader follows what a command does in a few steps: no chain of imports (at the
    top of a module or inside a function), from a command or anywhere, is longer than
    MOST_MODULES_IN_A_CHAIN modules."""
    chain = longest_chain(graph())
    assert chain[0].startswith("routerlab.cli.") or len(chain) < MOST_MODULES_IN_A_CHAIN
    assert len(chain) <= MOST_MODULES_IN_A_CHAIN, " -> ".join(chain)


def test_the_chain_finder_finds_the_longest():
    assert longest_chain({"a": {"b", "c"}, "b": {"d"}, "c": set(), "d": set()}) == ["a", "b", "d"]
    assert longest_chain({"x": set()}) == ["x"]


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


# -- one error tree ---------------------------------------------------------------------------

def exception_classes(lib: Path = LIB) -> list[tuple[str, str]]:
    """(module, class) of each exception class defined under ``lib``: a class one of whose
    bases is a built-in exception or, in turn, one of these (by name, as the source spells
    it, the last part of a dotted one)."""
    import builtins

    known = {n for n, v in vars(builtins).items() if isinstance(v, type) and issubclass(v, BaseException)}
    classes = []
    for path in sorted(lib.rglob("*.py")):
        parts = path.relative_to(lib.parent).with_suffix("").parts
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        classes += [(module, node) for node in ast.walk(ast.parse(path.read_text())) if isinstance(node, ast.ClassDef)]
    found: set[tuple[str, str]] = set()
    grew = True
    while grew:  # until no class is found to derive from one found
        grew = False
        for module, node in classes:
            if (module, node.name) not in found and {ast.unparse(b).rsplit(".", 1)[-1] for b in node.bases} & known:
                found.add((module, node.name))
                known.add(node.name)
                grew = True
    return sorted(found)


def test_every_exception_class_is_defined_in_errors():
    """One tree, in one module: a caller tells a kind of failure by its class, and finds
    every class (and who is to blame for it) in routerlab.errors."""
    found = exception_classes()
    assert ("routerlab.errors", "NotStarted") in found and ("routerlab.errors", "RouterlabError") in found
    assert [f"{m}.{c}" for m, c in found if m != "routerlab.errors"] == []


def test_the_exception_finder_follows_bases_across_modules(tmp_path):
    lib = tmp_path / "pkg"
    (lib / "sub").mkdir(parents=True)
    (lib / "errors.py").write_text("class Base(Exception):\n    pass\n")
    (lib / "sub" / "a.py").write_text("from pkg import errors\n\nclass Late(errors.Base):\n    pass\n\n"
                                      "class Plain:\n    pass\n\nclass _Own(ValueError):\n    pass\n")
    (lib / "sub" / "__init__.py").write_text("from pkg.sub.a import Late\n\nclass Later(Late):\n    pass\n")
    assert exception_classes(lib) == [("pkg.errors", "Base"), ("pkg.sub", "Later"), ("pkg.sub.a", "Late"),
                                      ("pkg.sub.a", "_Own")]


#: The parts of the library allowed to write to the terminal themselves: programs run by
#: name, whose standard streams are their only way to speak, with no command line above
#: them to draw for them (module file -> the functions, or ``__main__`` for the module's
#: ``if __name__ == "__main__":`` block).
PRINTING_PROGRAMS = {
    # python -m routerlab.remote.hostagent on a testbed host: its stderr is what the
    # measuring machine reads back over SSH when the agent ends on its own
    "remote/hostagent.py": {"main", "_watchdog"},
    # python -m routerlab.remote.hostrun: its usage line and why it could not start
    "remote/hostrun.py": {"main"},
    # python -m routerlab.testbed.netlink_routes, run inside the router's namespace: the
    # routes the kernel refused, read by the loader in testbed/shell
    "testbed/netlink_routes.py": {"__main__"},
}


def terminal_writes(path: Path) -> list[tuple[int, str, str]]:
    """Where ``path`` writes to the terminal itself: (line, what, enclosing function or
    ``__main__`` or ``<module>``) for each call of print(), each use of sys.stdout or
    sys.stderr, each import of rich or tqdm (bars and consoles)."""
    found = []

    def walk(node, where):
        for child in ast.iter_child_nodes(node):
            inside = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else where
            if isinstance(child, ast.If) and ast.unparse(child.test) == "__name__ == '__main__'":
                inside = "__main__"
            if isinstance(child, ast.Call) and isinstance(child.func, ast.Name) and child.func.id == "print":
                found.append((child.lineno, "print()", where))
            elif (isinstance(child, ast.Attribute) and isinstance(child.value, ast.Name) and child.value.id == "sys"
                  and child.attr in ("stdout", "stderr", "__stdout__", "__stderr__")):
                found.append((child.lineno, f"sys.{child.attr}", where))
            elif isinstance(child, (ast.Import, ast.ImportFrom)):
                names = [a.name for a in child.names] if isinstance(child, ast.Import) else [child.module or ""]
                found.extend((child.lineno, f"import {n}", where) for n in names if n.split(".")[0] in ("rich", "tqdm"))
            walk(child, inside)

    walk(ast.parse(path.read_text()), "<module>")
    return found


def test_the_library_does_not_print():
    """Outside cli/, the library reports through routerlab.progress and logging; only the
    command line draws. The programs run by name are the listed exceptions, each only in
    the functions named, and each still needs its exception."""
    assert [w[1] for w in terminal_writes(LIB / "cli" / "common.py")]  # the walk sees the command line's writes
    wrong, used = [], set()
    for path in sorted(LIB.rglob("*.py")):
        rel = path.relative_to(LIB).as_posix()
        if rel.startswith("cli/"):
            continue
        for line, what, where in terminal_writes(path):
            if where in PRINTING_PROGRAMS.get(rel, ()):
                used.add((rel, where))
            else:
                wrong.append(f"{rel}:{line}: {what} in {where}")
    assert wrong == []
    assert used == {(m, f) for m, fs in PRINTING_PROGRAMS.items() for f in fs}


def test_the_print_finder_finds_them(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("import sys\nfrom rich.progress import track\n\ndef f():\n    print('x')\n\n"
                 "def g():\n    sys.stderr.write('y')\n\nif __name__ == '__main__':\n    print('z', file=sys.stdout)\n")
    assert terminal_writes(f) == [(2, "import rich.progress", "<module>"), (5, "print()", "f"),
                                  (8, "sys.stderr", "g"), (11, "print()", "__main__"), (11, "sys.stdout", "__main__")]


def modules_run_by_name(lib: Path = LIB) -> list[tuple[str, str]]:
    """(file, module) of every ``-m routerlab.…`` the library runs (a command on a testbed
    host, in a user namespace, in the router's namespace): the module written as a string
    right after ``"-m"`` in a list or a call's arguments."""
    found = []
    for path in sorted(lib.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            seq = node.elts if isinstance(node, (ast.List, ast.Tuple)) else node.args if isinstance(node, ast.Call) else []
            words = [e.value if isinstance(e, ast.Constant) else None for e in seq]
            found += [(path.relative_to(lib).as_posix(), w) for flag, w in zip(words, words[1:])
                      if flag == "-m" and isinstance(w, str) and w.split(".")[0] == "routerlab"]
    return found


def test_every_module_run_by_name_exists():
    """A module moved to another folder must not leave a command that runs it by its old
    name: the host's agent, hostrun, userns, the netlink route loader, the command line."""
    import importlib.util

    found = modules_run_by_name()
    names = {m for _, m in found}
    assert {"routerlab.remote.hostagent", "routerlab.remote.hostrun", "routerlab.testbed.userns",
            "routerlab.testbed.netlink_routes", "routerlab.cli"} <= names
    assert [(f, m) for f, m in found if importlib.util.find_spec(m) is None] == []


def test_the_run_by_name_finder_sees_lists_and_calls(tmp_path):
    lib = tmp_path / "routerlab"
    lib.mkdir()
    (lib / "a.py").write_text('cmd = [python, "-m", "routerlab.gone", "x"]\nrun(exe, "-m", "routerlab.here")\n'
                              'other = ["-m", "json.tool"]\n')
    assert modules_run_by_name(lib) == [("a.py", "routerlab.gone"), ("a.py", "routerlab.here")]
