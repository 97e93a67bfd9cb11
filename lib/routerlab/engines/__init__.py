"""Router engines: one interface for the Linux kernel, nftables, eBPF/XDP, Click,
FastClick and bmv2, and the builds of the engines routerlab installs itself.

An engine turns a :class:`~routerlab.scenarios.Scenario` into its own configuration in
the testbed's DUT namespace, states which scenario features it supports, reports its
own forwarded counter and stops cleanly. For every engine that is not the kernel itself,
anything the engine leaves to the kernel's forwarding path is dropped and counted by a
guard table, so the kernel never does an engine's job unnoticed.

One module per concept, each engine registering itself by name (:func:`get`):

- :mod:`.base`    the :class:`Engine` contract, the registry, finding binaries
- :mod:`.rules`   the firewall rule model and its nftables and Click renderings
- :mod:`.kernel`  ``linux`` and ``nft``; routes, sysctls and the guard table
- :mod:`.calibration`  ``calibration``: the kernel behind a rate limit of known capacity
- :mod:`.ebpf`    ``ebpf`` (XDP) and the BPF compiler
- :mod:`.click`   ``click``, ``fastclick``, ``fastclick-dpdk``
- :mod:`.p4`      compiling P4 programs, table entries as data
- :mod:`.bmv2`    ``bmv2`` (simple_switch running a program of ``p4/``)
- :mod:`.builds`  building Click, FastClick, bmv2 and p4c from pinned sources

Imports go one way (docs/architecture.md lists them): ``builds`` imports nothing of the
package, ``base`` only ``builds``, every engine module only ``base``, ``builds``,
``rules``, ``kernel`` and ``p4``; nothing imports this package's ``__init__`` from
inside it.
"""

# each registers its engines, in this order (the order `get` lists them in)
from . import kernel  # noqa: F401,I001
from . import ebpf  # noqa: F401
from . import bmv2  # noqa: F401
from . import click  # noqa: F401
from . import calibration  # noqa: F401
from .base import ENGINES, Engine, find_binary, get, register  # noqa: F401
from .kernel import FILL_NET, guard_count, install_guard, install_routes  # noqa: F401
from .rules import Rule, firewall, nft_ruleset  # noqa: F401
