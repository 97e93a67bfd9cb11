"""routerlab: measure and teach software routers.

Modules, one concept each:

- :mod:`routerlab.stats`     packet loss, intervals, TIR, PDR/NDR, the PASTRAMI verdict
- :mod:`routerlab.synthetic` the paper's synthetic load-loss models (labelled synthetic)
- :mod:`routerlab.datasets`  the tidy trial table, its metadata, reading and writing
- :mod:`routerlab.pastrami`  the PASTRAMI raw format and the published data set
- :mod:`routerlab.plots`     figures (seaborn / matplotlib)
- :mod:`routerlab.notebooks` running the notebooks with papermill
- :mod:`routerlab.engines`   the routers: Linux, nftables, eBPF, Click, FastClick, bmv2; their builds
- :mod:`routerlab.measuring` the one way in to measuring on the testbed
- :mod:`routerlab.cli`       the ``routerlab`` command line

docs/architecture.md draws the layers and the path of one measurement.
"""

__version__ = "0.1.0"
