"""Router engines: one interface for the Linux kernel, nftables, eBPF/XDP, Click,
FastClick, bmv2 and any router started by a command of one's own (``exec``), the builds of
the engines routerlab installs itself, and engines other packages add (plug-ins: the
``routerlab.engines`` entry points); :mod:`.registry` finds each by name.

An engine turns a :class:`~routerlab.analysis.scenarios.Scenario` into its own configuration in
the testbed's DUT namespace, states which scenario features it supports, reports its
own forwarded counter and stops cleanly. For every engine that is not the kernel itself,
anything the engine leaves to the kernel's forwarding path is dropped and counted by a
guard table, so the kernel never does an engine's job unnoticed.

One module per engine or family of engines, each registering its engines by name
(:func:`get`, through :mod:`.registry`), beside what they share; docs/architecture.md
lists the modules.

Imports go one way (docs/architecture.md lists them): ``builds`` imports nothing of the
package, ``base`` only ``builds``, every engine module only ``base``, ``builds``,
``rules``, ``kernel`` and ``p4``; nothing imports this package's ``__init__`` from
inside it, and it imports no engine module.
"""

# the engines are found by name (registry); nothing here imports an engine module
from routerlab.engines.base import Engine, find_binary, register  # noqa: F401
from routerlab.engines.registry import classes, get, names  # noqa: F401
