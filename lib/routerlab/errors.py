"""Exceptions raised by routerlab: one base class, one subclass per kind of failure.

Every exception class of routerlab is defined here, so that a caller tells one kind of
failure from another by class (``except``, ``isinstance``), never by ``type(e) is``. Each
class says who is to blame:

- the user's input: :class:`DataFormatError`, :class:`ParameterError`, :class:`ValueRefused`;
- the machine or its circumstances: :class:`DataUnavailable`, :class:`NeedsRoot`,
  :class:`EngineNotFound`, :class:`ToolMissing`, :class:`BuildFailed`, :class:`TestbedError`,
  :class:`HostChangeRefused`, :class:`SshError`;
- an engine: :class:`NotAnswering`;
- the author of a router configuration or program, in the course the student's work:
  :class:`NotStarted` (the one class a check reports as the student's result);
- anything else, raised as a bare :class:`RouterlabError`: routerlab itself (an internal
  failure), never the student's work.
"""

from __future__ import annotations

import importlib
import sys


class RouterlabError(Exception):
    """Base class of every error routerlab raises on purpose. Raised bare, a failure of no
    more particular kind (the message says what): routerlab's or the machine's, never
    the student's work (a check reports it as an internal failure, not as a result)."""


class DataFormatError(RouterlabError, ValueError):
    """A data file is malformed; the message names the file and, where known, the line.
    To blame: the user's input (the file).

    Parameters
    ----------
    source : str
        File (or other source) that was being read.
    line : int or None
        1-based line number of the offending record, if known.
    message : str
        What is wrong.
    """

    def __init__(self, source: str, line: int | None, message: str):
        self.source = str(source)
        self.line = line
        self.message = message
        where = f"{self.source}:{line}" if line is not None else self.source
        super().__init__(f"{where}: {message}")


class ParameterError(RouterlabError, ValueError):
    """A parameter value is out of range; the message names the parameter. To blame: the
    user's input (an option, an argument, a key of a file)."""

    def __init__(self, name: str, message: str):
        self.name = name
        super().__init__(f"{name}: {message}")


class DataUnavailable(RouterlabError):
    """Data that a step needs is neither at hand nor downloadable (e.g. offline). To
    blame: the machine's circumstances."""


class NeedsRoot(RouterlabError):
    """The operation needs root (network namespaces, engines). To blame: how it was run."""


class EngineNotFound(RouterlabError):
    """An engine binary is neither on PATH nor named by its ROUTERLAB_<ENGINE> variable.
    To blame: the machine (the engine is not installed)."""


class ToolMissing(RouterlabError):
    """A tool or kernel facility a measurement needs (bpftool, libbpf, BTF, tracefs) is
    missing; the message names it and where it comes from. To blame: the machine."""


class BuildFailed(RouterlabError):
    """A step of an engine's build (a patch, configure, make, the install) failed; the
    message has the log's tail and its path. To blame: the machine (a missing package,
    the compiler) or the upstream source."""


class TestbedError(RouterlabError):
    """A command the testbed runs (ip, nft, sysctl, ethtool ...) failed; the message names
    the command and its error output. To blame: the machine (a kernel facility, a name
    already taken) or routerlab's use of it, never the user's input."""


class HostChangeRefused(RouterlabError):
    """A command would change a host of a testbed beyond one machine in a way its journal
    cannot undo (:mod:`routerlab.testbed.hostchanges`), so it is not run. To blame: the
    host as it is (its own routes, addresses or nft tables in routerlab's way), or
    routerlab, for a command its journal does not know how to undo."""


class SshError(RouterlabError):
    """A host could not be reached, or a command on it failed; the message names the host.
    To blame: the network, the host or its SSH set-up."""


class NotAnswering(RouterlabError):
    """The switch did not answer on its P4Runtime address in time. To blame: the engine
    (a switch that hangs, or starts too slowly)."""


class ValueRefused(RouterlabError):
    """A value that a key of a file does not take; the message says what the key takes.
    Raised by a file format's checks of one value, and turned by its reader into a
    :class:`DataFormatError` naming the file and the line. To blame: the user's input."""


class NotStarted(RouterlabError):
    """A router configuration or program did not start: Click refused the configuration
    or exited on it, p4c refused the program, the switch refused it or its table entries
    (the message says why, with file and line where known). To blame: the file's author;
    in the course, the student's work, which a check reports as its first expectation
    failing, not as a crash. Raised only where the configuration or program is known to be
    the cause: a failure of the machine around it is another class, or a bare
    :class:`RouterlabError`."""


# An error sent from one process to another (a user namespace's child, a testbed host's agent)
def error_record(e: BaseException) -> dict:
    """An error as plain data (JSON, pickle) for another process: its class, as
    ``module:QualName``, and its message."""
    return {"kind": f"{type(e).__module__}:{type(e).__qualname__}", "message": str(e)}


def error_class(kind: str) -> type[RouterlabError]:
    """The class a record's ``kind`` names (``module:QualName``, or a bare name of
    this module), if it is a :class:`RouterlabError`; else RouterlabError."""
    module, _, name = kind.rpartition(":")
    try:
        cls = getattr(importlib.import_module(module) if module else sys.modules[__name__], name)
    except (ImportError, AttributeError, ValueError, TypeError):
        cls = RouterlabError
    if not (isinstance(cls, type) and issubclass(cls, RouterlabError)):
        cls = RouterlabError
    return cls


def rebuilt_error(record: dict, *, source: str | None = None) -> RouterlabError:
    """The error a record (:func:`error_record`) describes, again in this process: of its
    own class (:func:`error_class`), with its message.

    Without ``source`` (a child of this process, the same code): the message as it was,
    the class's own ``__init__`` passed over (it may take other arguments than a message).
    With ``source`` (another machine's, e.g. ``"host dut"``): the message behind
    ``source: ``, built by the class itself; a :class:`ParameterError` is
    one of the parameter ``source``, and a :class:`DataFormatError`, whose
    file and line the record does not carry, a plain RouterlabError."""
    cls = error_class(record.get("kind", ""))
    message = record.get("message", "")
    if source is None:
        e = cls.__new__(cls)
        Exception.__init__(e, message)
        return e
    if issubclass(cls, ParameterError):
        return cls(source, message)
    if issubclass(cls, DataFormatError):
        cls = RouterlabError
    return cls(f"{source}: {message}")


def check_exit(what: str, returncode: int, err: str | None = "", out: str | None = "") -> None:
    """Raise :class:`RouterlabError` in one line, naming ``what`` (the
    command, in words), its exit status and the last line it said (its error output's, or
    else its output's), unless ``returncode`` is 0."""
    if returncode != 0:
        said = ((err or "").strip() or (out or "").strip() or "nothing said").splitlines()[-1]
        raise RouterlabError(f"{what} exited {returncode}: {said}")
