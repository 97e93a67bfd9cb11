"""YAML files read with their line numbers, and checked against a declared shape.

Every file format of routerlab (testbed files, campaign files, scenario files, an
instructor's extra checks, the engines' build recipes, the sources of the figures, an
exercise's check.yaml) is read here (:func:`load`,
:func:`parse`) and its structure checked here (:func:`check`) against the shape the
format declares: a :class:`Shape` (a mapping's keys, which are required, what each value
is), :class:`MapOf` (a mapping of free names), :class:`ListOf` (a list), a Python type, a
function, or a tuple of these (any one). What a format checks beyond its shape (that an
engine exists, that two links meet) stays in its own module, which names the line of what
it refuses with :func:`line_of`.

Mappings and lists come back as :class:`Map` and :class:`List`: a ``dict`` and a ``list``
that know the line each key, value and item is on. A plain ``dict`` or ``list`` is checked
the same way, its errors then naming the nearest line known. A function in a shape checks
one value: it raises :class:`~routerlab.errors.ValueRefused` saying what is allowed.

Every refusal is one :class:`~routerlab.errors.DataFormatError`, in one format::

    FILE:LINE: WHERE: unknown key 'K'; allowed: A, B, C
    FILE:LINE: WHERE: missing key(s) A, B; required: A, B
    FILE:LINE: WHERE: VALUE is not allowed; allowed: WHAT
    FILE:LINE: not valid YAML: PROBLEM (CONTEXT)

WHERE names the value as the format does (``host dut: env``, ``step 2 (measure): loads``);
"the file" for the top of the file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from routerlab.errors import DataFormatError, ValueRefused


class Map(dict):
    """A mapping read from YAML: a ``dict`` that knows its lines (1-based): ``line`` its own
    start, ``key_lines`` and ``value_lines`` each key's and each value's."""

    line: int | None = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.key_lines: dict = {}
        self.value_lines: dict = {}


class List(list):
    """A list read from YAML: a ``list`` that knows its lines (1-based): ``line`` its own
    start, ``item_lines`` each item's."""

    line: int | None = None

    def __init__(self, *args):
        super().__init__(*args)
        self.item_lines: list[int] = []


class _Loader(yaml.SafeLoader):
    """PyYAML's safe loader, building :class:`Map` and :class:`List` with their lines."""


def _map(loader: _Loader, node: yaml.MappingNode):
    data = Map()
    data.line = node.start_mark.line + 1
    yield data
    data.update(loader.construct_mapping(node))  # flattens merge keys (<<) into node.value
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node)
        data.key_lines[key] = key_node.start_mark.line + 1
        data.value_lines[key] = value_node.start_mark.line + 1


def _list(loader: _Loader, node: yaml.SequenceNode):
    data = List()
    data.line = node.start_mark.line + 1
    data.item_lines = [n.start_mark.line + 1 for n in node.value]
    yield data
    data.extend(loader.construct_sequence(node))


_Loader.add_constructor("tag:yaml.org,2002:map", _map)
_Loader.add_constructor("tag:yaml.org,2002:seq", _list)
# what was read can be written back as plain YAML
yaml.SafeDumper.add_representer(Map, yaml.representer.SafeRepresenter.represent_dict)
yaml.SafeDumper.add_representer(List, yaml.representer.SafeRepresenter.represent_list)


def read(path, what: str = "the file") -> bytes:
    """The bytes of ``path``; a file that cannot be read is one :class:`DataFormatError`
    naming it and why ("cannot read the testbed file (No such file or directory)")."""
    try:
        return Path(path).read_bytes()
    except OSError as e:
        raise DataFormatError(str(path), None, f"cannot read {what} ({e.strerror or e})") from None


def parse(text: str | bytes, source) -> Any:
    """The YAML document ``text`` (UTF-8 if bytes), mappings and lists as :class:`Map` and
    :class:`List`; None for an empty document. A syntax error is one
    :class:`DataFormatError` naming ``source`` and the line."""
    try:
        if isinstance(text, bytes):
            text = text.decode()
        return yaml.load(text, Loader=_Loader)  # noqa: S506 - _Loader is a SafeLoader
    except UnicodeDecodeError as e:
        raise DataFormatError(str(source), None, f"not UTF-8 text: {e.reason} at byte {e.start}") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        problem, context = getattr(e, "problem", None), getattr(e, "context", None)
        what = f"{problem} ({context})" if problem and context else problem or str(e).splitlines()[0]
        raise DataFormatError(str(source), mark.line + 1 if mark else None, f"not valid YAML: {what}") from None


def load(path, what: str = "the file") -> Any:
    """:func:`read` and :func:`parse` the file ``path``; ``what`` names it in the error of a
    file that cannot be read."""
    return parse(read(path, what), path)


def line_of(container, key=None) -> int | None:
    """The line (1-based) of ``key``'s value in a :class:`Map` (of item ``key``, counted
    from 0, in a :class:`List`), or of the container itself when ``key`` is None or not
    in it; None for what was not read from YAML."""
    if isinstance(container, Map) and key is not None and key in container.value_lines:
        return container.value_lines[key]
    if isinstance(container, List) and isinstance(key, int) and 0 <= key < len(container.item_lines):
        return container.item_lines[key]
    return getattr(container, "line", None)


def _key_line(container, key) -> int | None:
    if isinstance(container, Map) and key in container.key_lines:
        return container.key_lines[key]
    return line_of(container)


@dataclass(frozen=True)
class Shape:
    """A mapping with known keys: ``keys`` each key and what its value is (a spec: a type,
    a function, a :class:`Shape`, :class:`MapOf`, :class:`ListOf`, or a tuple of these),
    in the order messages list them; ``required`` those that must be given. ``each``
    names a value in messages in place of the mapping's own name (``"role {key}"``);
    ``what`` says in words what the mapping is, for the refusal of anything else."""

    keys: dict
    required: tuple[str, ...] = ()
    each: str | None = None
    what: str | None = None


@dataclass(frozen=True)
class MapOf:
    """A mapping of free names, each value ``value`` (a spec); at least ``min`` entries.
    ``each`` and ``what`` as :class:`Shape`'s."""

    value: Any
    min: int = 0
    each: str | None = None
    what: str | None = None


@dataclass(frozen=True)
class ListOf:
    """A list, each item ``item`` (a spec), at least ``min`` and at most ``max`` items.
    ``each`` names an item (``"case {n}"``, counted from 1); ``what`` as :class:`Shape`'s."""

    item: Any
    min: int = 0
    max: int | None = None
    each: str | None = None
    what: str | None = None


_WORDS = {str: "a text", int: "a whole number", float: "a number", bool: "true or false", dict: "a mapping",
          list: "a list", object: "anything"}


def describe(spec) -> str:
    """What ``spec`` allows, in words ("a list of 2 items, each a text")."""
    if spec is None:
        return "nothing"
    if isinstance(spec, tuple):
        return " or ".join(dict.fromkeys(describe(s) for s in spec if not (s is int and float in spec)))
    if isinstance(spec, type):
        return _WORDS.get(spec, f"a {spec.__name__}")
    if getattr(spec, "what", None):
        return spec.what
    if isinstance(spec, Shape):
        return f"a mapping with the key{'s' if len(spec.keys) > 1 else ''} {', '.join(spec.keys)}"
    if isinstance(spec, MapOf):
        return "a mapping" + (f" of at least {spec.min}" if spec.min else "") + f", each value {describe(spec.value)}"
    if isinstance(spec, ListOf):
        size = (f" of {spec.min} item{'s' if spec.min != 1 else ''}" if spec.min == spec.max else
                f" of at least {spec.min} item{'s' if spec.min != 1 else ''}" if spec.min else "")
        return f"a list{size}, each {describe(spec.item)}"
    return "a value it takes"


def _is(value, t: type) -> bool:
    """Whether ``value`` is a ``t`` as a file means it: true and false are no numbers, a
    whole number is a number."""
    if t in (int, float):
        return isinstance(value, (int, float) if t is float else int) and not isinstance(value, bool)
    return isinstance(value, t)


def _join(where: str, name) -> str:
    return f"{where}: {name}" if where else str(name)


def check(value, spec, source, where: str = "", *, parent: str = "", line: int | None = None) -> None:
    """Check ``value`` (read from ``source``) against ``spec``; ``where`` names it in messages
    ("" for the top of the file), ``parent`` names the mapping or list it is in (where a
    spec's ``each`` names its members), ``line`` the line to name when ``value`` knows none.
    Keys are looked at in the file's order (an unknown key or a value refused ends it),
    then the missing ones. Raises :class:`DataFormatError` (module docstring's format)."""

    def refuse(at, message):
        raise DataFormatError(str(source), at if at is not None else line, f"{where or 'the file'}: {message}")

    here = getattr(value, "line", None) or line
    specs = spec if isinstance(spec, tuple) else (spec,)
    if value is None and None in specs:
        return
    if isinstance(value, dict):
        container = next((s for s in specs if isinstance(s, (Shape, MapOf))), None)
    elif isinstance(value, list):
        container = next((s for s in specs if isinstance(s, ListOf)), None)
    else:
        container = None
    if container is not None:
        _members(value, container, source, where, parent, here, refuse)
        return
    allowed = []  # what each spec allows, in words: a function's own refusal says it
    for s in specs:
        if isinstance(s, type):
            if _is(value, s):
                return
        elif s is not None and not isinstance(s, (Shape, MapOf, ListOf)):
            try:
                s(value)
                return
            except ValueRefused as e:
                allowed.append(str(e))
                continue
        if not (s is int and float in specs):  # a number takes whole numbers too
            allowed.append(describe(s))
    if value is None and not where:
        refuse(here or 1, f"it is empty; it must be {' or '.join(dict.fromkeys(allowed))}")
    refuse(here, f"{_shown(value)} is not allowed; allowed: {' or '.join(dict.fromkeys(allowed))}")


def _members(value, spec, source, where: str, parent: str, here: int | None, refuse) -> None:
    def member(key, n):
        if spec.each:
            return _join(parent, spec.each.format(key=key, n=n))
        return _join(where, key if not isinstance(spec, ListOf) else f"item {n}")

    if isinstance(spec, ListOf):
        if len(value) < spec.min or (spec.max is not None and len(value) > spec.max):
            refuse(here, f"{_shown(value)} is not allowed; allowed: {describe(spec)}")
        for i, item in enumerate(value):
            check(item, spec.item, source, member(i, i + 1), parent=where, line=line_of(value, i) or here)
        return
    if isinstance(spec, MapOf):
        if len(value) < spec.min:
            refuse(here, f"{_shown(value)} is not allowed; allowed: {describe(spec)}")
        for n, (k, v) in enumerate(value.items(), 1):
            check(v, spec.value, source, member(k, n), parent=where, line=line_of(value, k) or here)
        return
    for n, (k, v) in enumerate(value.items(), 1):
        if k not in spec.keys:
            refuse(_key_line(value, k), f"unknown key {k!r}; allowed: {', '.join(spec.keys)}")
        check(v, spec.keys[k], source, member(k, n), parent=where, line=line_of(value, k) or here)
    missing = [k for k in spec.required if k not in value]
    if missing:
        refuse(here, f"missing key(s) {', '.join(missing)}; required: {', '.join(spec.required)}")


def _shown(value, limit: int = 200) -> str:
    """``value`` as Python writes it, cut to ``limit`` characters so that a message stays
    one readable line."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."
