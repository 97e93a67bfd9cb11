"""The testbed's settings: which generator, how idle CPUs wait, and which testbed a
measurement makes (the namespace testbed, or one beyond one machine)."""

from __future__ import annotations

import os
from contextlib import contextmanager
from contextvars import ContextVar

from routerlab.errors import ParameterError
from routerlab.testbed.interface import GENERATORS

#: How idle CPUs wait while a testbed is up: "poll" (CPU latency request 0 µs held) or
#: "os" (the kernel's own choice of idle state).
CPU_IDLE_MODES = ("poll", "os")


class _Choice:
    """A testbed setting chosen among a few names: the innermost block's, else an
    environment variable's, else a default."""

    def __init__(self, env: str, allowed: tuple[str, ...], default: str):
        self.env, self.allowed, self.default = env, allowed, default
        self._chosen: ContextVar[tuple[str, ...]] = ContextVar(env, default=())

    def checked(self, name: str, value: str) -> str:
        """``value`` if it is allowed, else a ParameterError naming ``name``."""
        if value not in self.allowed:
            raise ParameterError(name, f"must be one of {', '.join(self.allowed)}, got {value!r}")
        return value

    def current(self) -> str:
        if self._chosen.get():
            return self._chosen.get()[-1]
        return self.checked(self.env, os.environ.get(self.env, self.default))

    @contextmanager
    def block(self, name: str, value: str):
        token = self._chosen.set(self._chosen.get() + (self.checked(name, value),))
        try:
            yield
        finally:
            self._chosen.reset(token)


_IDLE = _Choice("ROUTERLAB_CPU_IDLE", CPU_IDLE_MODES, "poll")
_GENERATOR = _Choice("ROUTERLAB_GENERATOR", GENERATORS, "xdp")


def default_cpu_idle() -> str:
    """The idle mode a :class:`Testbed` takes when not told: the innermost
    :func:`cpu_idle` block's, else ``ROUTERLAB_CPU_IDLE``, else "poll"."""
    return _IDLE.current()


def cpu_idle(mode: str):
    """Testbeds made inside this ``with`` block idle their CPUs in ``mode`` (one of
    :data:`CPU_IDLE_MODES`), whatever the environment says."""
    return _IDLE.block("cpu_idle", mode)


def default_generator() -> str:
    """The generator a :class:`Testbed` takes when not told: the innermost
    :func:`generator` block's (a command's ``--generator``), else ``ROUTERLAB_GENERATOR``,
    else "xdp"."""
    return _GENERATOR.current()


def generator_asked() -> str | None:
    """The generator the innermost :func:`generator` block names (a command's
    ``--generator``), or None outside one."""
    chosen = _GENERATOR._chosen.get()
    return chosen[-1] if chosen else None


def generator(name: str):
    """Testbeds made inside this ``with`` block drive the generator ``name`` (one of
    :data:`GENERATORS`), whatever the environment says."""
    return _GENERATOR.block("generator", name)


_FACTORY: ContextVar = ContextVar("testbed factory", default=None)


def factory():
    """The innermost :func:`use` block\'s testbed factory, or None outside one."""
    return _FACTORY.get()



def beyond_one_machine() -> bool:
    """Whether measurements now make their testbeds with a :func:`use` block's factory."""
    return _FACTORY.get() is not None


def check_engine(engine, scenario):
    """Check ``engine`` for ``scenario`` where the :func:`use` block's testbed runs it (its
    router's host), raising what its own check raises there; nothing outside such a block."""
    factory = _FACTORY.get()
    if factory is not None and getattr(factory, "check_engine", None):
        factory.check_engine(engine, scenario)


@contextmanager
def use(factory):
    """Measurements inside this ``with`` block make their testbeds with ``factory``
    (called with :class:`Testbed`'s parameters) instead of the namespace testbed; a
    factory with a ``check_engine(engine, scenario)`` method checks engines where it runs
    them."""
    token = _FACTORY.set(factory)
    try:
        yield
    finally:
        _FACTORY.reset(token)


