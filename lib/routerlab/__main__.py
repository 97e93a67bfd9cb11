"""``python -m routerlab``: the `routerlab` command."""

from routerlab.cli import main

main()
