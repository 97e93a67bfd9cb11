"""``python -m routerlab.cli``."""

from routerlab.cli import main

main()
