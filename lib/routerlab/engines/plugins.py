"""Engines other Python packages add, without editing routerlab: each names its engine in
the ``routerlab.engines`` entry-point group, as pytest plug-ins do::

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

#: The entry-point group plug-ins name their engines in.
GROUP = "routerlab.engines"

_failed: dict[str, str] | None = None


def load() -> dict[str, str]:
    """Load every plug-in (once); return those that failed: entry point -> what went wrong."""
    global _failed
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
    """Every engine's name: routerlab's own, then those of plug-ins."""
    load()
    return list(base.ENGINES)


def get(name: str) -> base.Engine:
    """An engine by name, a plug-in's too (:func:`routerlab.engines.base.get`)."""
    if name not in base.ENGINES:
        load()
    return base.get(name)
