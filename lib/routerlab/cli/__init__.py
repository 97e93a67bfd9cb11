"""The ``routerlab`` command line: a package of one module per command group, each only
collecting options, calling the library and printing. Shared option types and output
helpers live in :mod:`.common`."""

from . import analysis, benchmarks, click, engines, figures, measuring, p4  # noqa: F401  (they add their commands)
from .app import app


def main():  # pragma: no cover - console entry for `python -m routerlab.cli`
    app()
