"""Benchmarks: what ``routerlab bench`` runs, one module per benchmark, named after its
command (``bench engines`` is :mod:`.engines`; ``bench batch``, FastClick's forwarding
against its batch size, is :mod:`.forwarding`'s), each with the text report its command
prints. Targets (budgets, published claims) live here, never in unit tests.
docs/architecture.md lists the modules.

The measuring itself stays with the experiment it belongs to (``microbench``,
``measuring``, ``traffic``); the modules here run it and put the figures next to the
published ones. Nothing is imported here, so that a command loads only its own module.
"""
