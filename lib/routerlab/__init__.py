"""routerlab: measure and teach software routers.

Its modules, each with its layer and what it holds, are listed in docs/architecture.md.
"""

__version__ = "0.1.0"
