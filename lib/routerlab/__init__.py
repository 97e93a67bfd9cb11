"""routerlab: measure and teach software routers.

Its modules, each with its layer and what it holds, are listed in docs/architecture.md.
``routerlab.__version__`` is the installed package's version
(:func:`routerlab.version.installed_version`).
"""


def __getattr__(name: str):
    # read when first asked for: importing importlib.metadata takes about as long as the
    # whole of `routerlab --version` from a tagged clone, which never needs it
    if name == "__version__":
        from routerlab.version import installed_version

        return installed_version()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
