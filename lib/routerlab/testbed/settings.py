"""The testbed's settings: which generator, how idle CPUs wait, and which testbed a
measurement makes (the namespace testbed, or one beyond one machine), as one frozen
value that a command (or a campaign, a benchmark, a notebook) makes once and passes down."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Callable

from routerlab.errors import ParameterError
from routerlab.defaults import GENERATORS

#: How idle CPUs wait while a testbed is up: "poll" (CPU latency request 0 µs held) or
#: "os" (the kernel's own choice of idle state).
CPU_IDLE_MODES = ("poll", "os")
#: The environment variables a setting not given is taken from, and the defaults without them.
GENERATOR_ENV, CPU_IDLE_ENV = "ROUTERLAB_GENERATOR", "ROUTERLAB_CPU_IDLE"
DEFAULT_GENERATOR, DEFAULT_CPU_IDLE = "xdp", "poll"


def _checked(name: str, value: str, allowed: tuple[str, ...]) -> str:
    """``value`` if it is allowed, else a ParameterError naming ``name``."""
    if value not in allowed:
        raise ParameterError(name, f"must be one of {', '.join(allowed)}, got {value!r}")
    return value


def environment_generator() -> str:
    """The generator ``ROUTERLAB_GENERATOR`` names, else "xdp" (checked)."""
    return _checked(GENERATOR_ENV, os.environ.get(GENERATOR_ENV, DEFAULT_GENERATOR), GENERATORS)


def environment_cpu_idle() -> str:
    """The idle mode ``ROUTERLAB_CPU_IDLE`` names, else "poll" (checked)."""
    return _checked(CPU_IDLE_ENV, os.environ.get(CPU_IDLE_ENV, DEFAULT_CPU_IDLE), CPU_IDLE_MODES)


def checked_generator(value: str, name: str = "generator") -> str:
    """``value`` if it is a generator (:data:`GENERATORS`), else a ParameterError naming ``name``."""
    return _checked(name, value, GENERATORS)


def checked_cpu_idle(value: str, name: str = "cpu_idle") -> str:
    """``value`` if it is an idle mode (:data:`CPU_IDLE_MODES`), else a ParameterError naming ``name``."""
    return _checked(name, value, CPU_IDLE_MODES)


@dataclass(frozen=True)
class Settings:
    """How the testbeds of one command (or campaign, benchmark, notebook) are made.

    Parameters
    ----------
    generator : str, optional
        "xdp" or "rlgen" (:data:`GENERATORS`) for every testbed made with these settings;
        None: ``ROUTERLAB_GENERATOR``, else "xdp". A testbed asked for "xdp" where it cannot
        run takes rlgen (:func:`routerlab.testbed.capabilities.runnable`).
    cpu_idle : str, optional
        How idle CPUs wait while a testbed is up (:data:`CPU_IDLE_MODES`); None:
        ``ROUTERLAB_CPU_IDLE``, else "poll".
    factory : callable, optional
        Makes the testbeds instead of the namespace testbed (called with its parameters):
        a testbed beyond one machine (:func:`routerlab.remote.sshtestbed.using`). One with a
        ``check_engine(engine, scenario)`` method checks engines where it runs them.
    generator_asked : bool
        Whether ``generator`` is what the user asked for (a command's ``--generator``),
        not a default.
    """

    generator: str | None = None
    cpu_idle: str | None = None
    factory: Callable | None = None
    generator_asked: bool = False

    def __post_init__(self):
        object.__setattr__(self, "generator", environment_generator() if self.generator is None
                           else checked_generator(self.generator))
        object.__setattr__(self, "cpu_idle", environment_cpu_idle() if self.cpu_idle is None
                           else checked_cpu_idle(self.cpu_idle))

    @classmethod
    def asked(cls, generator: str | None = None, **kw) -> "Settings":
        """The settings of a command given ``--generator generator`` (None: not given)."""
        return cls(generator=generator, generator_asked=generator is not None, **kw)

    @property
    def beyond_one_machine(self) -> bool:
        """Whether measurements make their testbeds with :attr:`factory`."""
        return self.factory is not None

    def check_engine(self, engine, scenario):
        """Check ``engine`` for ``scenario`` where the factory's testbed runs it (its
        router's host), raising what its own check raises there; nothing without a factory."""
        if self.factory is not None and getattr(self.factory, "check_engine", None):
            self.factory.check_engine(engine, scenario)
