"""How a long piece of work says how far it has got: the library reports, the caller draws.

A function that takes long (a sweep's trials, a microbenchmark's configurations, the
course's exercises, the gallery's figures, the PASTRAMI files) takes ``progress:
Progress = silent`` and calls it with one :class:`Step` as each part starts or ends.
The library never prints; the command line (:mod:`routerlab.cli.common`) turns the
steps into its bars and lines, a notebook or a test into whatever it likes.

One-off messages to the user from deep inside (a generator replaced, loss attribution
off) go through :mod:`logging` under ``routerlab``: with nothing configured Python
writes them to stderr as they are, and the command line writes them itself.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Step:
    """How far a piece of work has got.

    ``what``: what is being done, in a few words ("fastclick ipv4 @ 100000 pps");
    ``done`` of ``total``: the parts finished and the parts there are (None: not counted,
    e.g. one part starting); ``note``: a passing remark about this part ("repeating,
    the probe saw a stop of 12 ms"), empty when there is none."""

    what: str
    done: int | None = None
    total: int | None = None
    note: str = ""


#: What a long piece of work calls with each :class:`Step`.
Progress = Callable[[Step], None]


def silent(step: Step) -> None:
    """The :data:`Progress` that shows nothing: the default of every function taking one."""
