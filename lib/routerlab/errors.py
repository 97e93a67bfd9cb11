"""Exceptions raised by routerlab: one base class, one subclass per kind of failure."""

from __future__ import annotations


class RouterlabError(Exception):
    """Base class of every error routerlab raises on purpose."""


class DataFormatError(RouterlabError, ValueError):
    """A data file is malformed; the message names the file and, where known, the line.

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
    """A parameter value is out of range; the message names the parameter."""

    def __init__(self, name: str, message: str):
        self.name = name
        super().__init__(f"{name}: {message}")


class DataUnavailable(RouterlabError):
    """Data that a step needs is neither at hand nor downloadable (e.g. offline)."""


class NeedsRoot(RouterlabError):
    """The operation needs root (network namespaces, engines)."""


class EngineNotFound(RouterlabError):
    """An engine binary is neither on PATH nor named by its ROUTERLAB_<ENGINE> variable."""


class ToolMissing(RouterlabError):
    """A tool or kernel facility a measurement needs (bpftool, libbpf, BTF, tracefs) is
    missing; the message names it and where it comes from."""
