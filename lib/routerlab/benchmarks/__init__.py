"""Benchmarks: what ``routerlab bench`` runs, one module per benchmark, named after what
it measures, each with the text report its command prints. Targets (budgets, published
claims) live here, never in unit tests.

- :mod:`.assess`: how long assessing the published PASTRAMI set takes;
- :mod:`.generators`: how precisely each traffic generator hits a requested rate;
- :mod:`.engine_pdr`: the PDR of several engines in one run, as ratios;
- :mod:`.calibrate`: the sweep and the searches against a router of known capacity;
- :mod:`.forwarding`: in-memory forwarding of Click and FastClick (the MoonRoute
  comparison) and FastClick's batch size;
- :mod:`.consolidation`: FastPath's header-action consolidation;
- :mod:`.startup`: how long `routerlab --help` and `routerlab assess` take, next to floors.
- :mod:`.repeat`: whether a sweep repeats (the same sweep twice in a row, load by load).

The measuring itself stays with the experiment it belongs to (``microbench``,
``measuring``, ``traffic``); the modules here run it and put the figures next to the
published ones. Nothing is imported here, so that a command loads only its own module.
"""
