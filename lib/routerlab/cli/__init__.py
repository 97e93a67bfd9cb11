"""The ``routerlab`` command line: a package of one module per command group, each only
collecting options, calling the library and printing. Shared option types and output
helpers live in :mod:`.common`; the application (:mod:`.app`) loads the command modules
when it first needs its commands."""

import atexit
import os
import sys

from routerlab.cli.app import app


def main():
    """The ``routerlab`` console entry: run the command, then leave at once.

    Once the command is done, tearing the interpreter down (freeing every module of numpy,
    pandas and pyarrow one by one) takes a fifth of a second, a sixth of `routerlab
    assess`'s time (issue #14). So the exit handlers run and the output is flushed, as at a
    normal exit, and then the process ends without that teardown. An uncaught error still
    ends the normal way, with its traceback.
    """
    try:
        app()
        code = 0
    except SystemExit as e:
        code = e.code
    if code is not None and not isinstance(code, int):
        print(code, file=sys.stderr)
        code = 1
    atexit._run_exitfuncs()  # what a normal exit runs: the libraries' cleanup
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code or 0)
