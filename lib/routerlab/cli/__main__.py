"""``python -m routerlab.cli``."""

from . import main

main()
