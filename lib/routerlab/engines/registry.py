"""The engines by name: routerlab's own, then those other Python packages add.

routerlab's own engines are found by the names of their modules (:data:`BUILTIN`),
imported the first time an engine is asked for, so that what measures (a sweep, a search)
depends on the :class:`~routerlab.engines.base.Engine` contract and not on every engine.

Other packages add engines without editing routerlab: each names its engine in the
``routerlab.engines`` entry-point group, as pytest plug-ins do::

    # the plug-in package's pyproject.toml
    [project.entry-points."routerlab.engines"]
    vpp = "routerlab_vpp:VppEngine"

The object an entry point names is an :class:`~routerlab.engines.base.Engine` subclass
(registered under its ``name``) or a module whose import registers its engines with
:func:`~routerlab.engines.base.register`. Plug-ins are loaded once, the first time an
engine name is not one of routerlab's own or the list of engines is asked for, so that a
command that needs no plug-in does not pay for finding them. A plug-in that fails to load
is kept with its error (``routerlab doctor`` names it); the other engines are unaffected.
"""

from __future__ import annotations

from routerlab.engines import base
from routerlab.errors import ParameterError

#: The entry-point group plug-ins name their engines in.
GROUP = "routerlab.engines"
#: routerlab's own engine modules, each registering its engines on import, in the order
#: :func:`names` lists them.
BUILTIN = ("routerlab.engines.kernel", "routerlab.engines.ebpf", "routerlab.engines.bmv2",
           "routerlab.engines.click", "routerlab.engines.vpp", "routerlab.engines.calibration",
           "routerlab.engines.external")

_builtin_loaded = False


def load_builtin():
    """Import routerlab's own engine modules (once), which registers their engines."""
    global _builtin_loaded
    if _builtin_loaded:
        return
    import importlib

    for module in BUILTIN:
        importlib.import_module(module)
    _builtin_loaded = True

_failed: dict[str, str] | None = None


def load() -> dict[str, str]:
    """Load every plug-in (once); return those that failed: entry point -> what went wrong."""
    global _failed
    load_builtin()  # first, so that a plug-in cannot take one of their names
    if _failed is not None:
        return _failed
    from importlib.metadata import entry_points

    from routerlab.engines.base import Engine, ENGINES, register

    _failed = {}
    for ep in entry_points(group=GROUP):
        label = f"{ep.name} ({ep.value}{', from ' + ep.dist.name if ep.dist else ''})"
        before = dict(ENGINES)
        try:
            obj = ep.load()
        except Exception as e:  # noqa: BLE001  a plug-in's bug must not take the others down
            ENGINES.clear()
            ENGINES.update(before)
            _failed[label] = f"{type(e).__name__}: {e}"
            continue
        # a module that registers on import may not take a name that is already taken
        replaced = sorted(n for n in before if ENGINES.get(n) is not before[n])
        if replaced:
            ENGINES.update({n: before[n] for n in replaced})
            _failed[label] = f"engine name(s) {', '.join(replaced)} taken; kept routerlab's"
            continue
        if isinstance(obj, type):
            if not (issubclass(obj, Engine) and obj.name):
                _failed[label] = "not an Engine subclass with a name"
            elif obj.name in ENGINES and ENGINES[obj.name] is not obj:
                _failed[label] = f"engine name {obj.name!r} is taken"
            else:
                register(obj)
    return _failed


def names() -> list[str]:
    """Every engine's name: routerlab's own in the order of :data:`BUILTIN` (whichever of
    their modules was imported first), then those of plug-ins."""
    return list(classes())


def get(name: str) -> base.Engine:
    """An engine by name, a plug-in's too; an unknown name is refused with the known ones."""
    load_builtin()
    if name not in base.ENGINES:
        load()
        if name not in base.ENGINES:
            raise ParameterError("engine", f"unknown engine {name!r}; known: {', '.join(names())}")
    return base.ENGINES[name]()


def classes() -> dict[str, type[base.Engine]]:
    """Every engine's class by name, routerlab's own then plug-ins' (as :func:`names`)."""
    load()
    rank = {module: i for i, module in enumerate(BUILTIN)}
    # stable: the engines of one module stay in the order it registers them
    ordered = sorted(base.ENGINES.items(), key=lambda kv: rank.get(kv[1].__module__, len(BUILTIN)))
    return dict(ordered)
