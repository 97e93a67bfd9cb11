"""The project's templates over facts: the filters that format numbers, the numbers a
template types by hand (refused: every measured number is a field of the facts), and a
template rendered citing every number as a field (a dataset's README and NOTES.md, the
instructor's guide)."""

from __future__ import annotations

import math
import re

from routerlab.errors import DataFormatError


def pps(x) -> str:
    """A rate in pps with thousands separators and no decimals ("26,816")."""
    return "n/a" if x is None else f"{float(x):,.0f}"


def loss(x) -> str:
    """A loss ratio as a percentage with two significant digits ("0.0076%", "0.43%",
    "25%"); "0" for none, "n/a" when unknown."""
    if x is None:
        return "n/a"
    v = 100 * float(x)
    if v == 0:
        return "0"
    digits = max(0, 1 - math.floor(math.log10(abs(v))))
    return f"{v:.{digits}f}%"


def pct(x, digits: int = 0) -> str:
    """A ratio in [0, 1] as a percentage with ``digits`` decimals ("54%")."""
    return "n/a" if x is None else f"{100 * float(x):.{digits}f}%"


def num(x, fmt: str = "g") -> str:
    """A number in a Python format ("g" by default); "n/a" when unknown."""
    return "n/a" if x is None else format(x, fmt)


def utc(stamp, fmt: str = "%Y-%m-%d %H:%M") -> str:
    """An ISO 8601 time stamp in a shorter form, UTC."""
    if not stamp:
        return "n/a"
    from datetime import datetime

    return datetime.fromisoformat(str(stamp).replace("Z", "+00:00")).strftime(fmt)


FILTERS = {"pps": pps, "loss": loss, "pct": pct, "num": num, "utc": utc}

#: A number typed in prose: digits not inside a word ("IPv4", "fw50", "P4_16") nor after
#: "@" ("PDR@0.5%"). NOTES.md must cite such numbers as fields (or put them in `code`).
_NUMBER = re.compile(r"(?<![\w@.\-/])\d[\d,.]*(?![\w])")


def typed_numbers(template: str) -> list[tuple[int, str]]:
    """The numbers a NOTES template types by hand: ``(line, text)`` for every number outside
    a ``{{ field }}``, a ``{% tag %}``, a ``{# comment #}``, a `code span` or a fenced block."""
    out, fenced = [], False
    for i, line in enumerate(template.splitlines(), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            continue
        bare = re.sub(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}|`[^`]*`|\]\([^)]*\)", " ", line)
        out += [(i, m.group()) for m in _NUMBER.finditer(bare)]
    return out


def environment():
    """The jinja2 environment of the project's templates over facts: a field that does
    not exist is an error, and :data:`FILTERS` format numbers."""
    import jinja2

    env = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True,
                             trim_blocks=True, lstrip_blocks=True, autoescape=False,
                             extensions=["jinja2.ext.do"])
    env.filters.update(FILTERS)
    return env


def render_cited(text: str, context: dict, source, facts_name: str) -> str:
    """Template ``text`` (``source`` names it in errors) rendered over ``context``, which
    ``facts_name`` names for a person, when it cites every measured number as a field.

    Raises
    ------
    DataFormatError
        Naming ``source`` and the line: a number typed outside a field, a field the
        context does not have, or a template error.
    """
    import jinja2

    typed = typed_numbers(text)
    if typed:
        line, number = typed[0]
        raise DataFormatError(source, line, f"the number {number!r} is typed by hand: cite it as a field of "
                              f"{facts_name} ({{{{ ... }}}}) or put it in `code` if it is not a measurement")
    try:
        return environment().from_string(text).render(**context)
    except jinja2.UndefinedError as e:
        raise DataFormatError(source, template_line(e), f"no such field in {facts_name}: {e.message}") from None
    except jinja2.TemplateError as e:
        raise DataFormatError(source, getattr(e, "lineno", None), str(e)) from None


def template_line(e) -> int | None:
    """The line of a jinja2 template (rendered from a string) where error ``e`` arose."""
    import traceback

    for frame in reversed(traceback.extract_tb(e.__traceback__)):
        if frame.filename == "<template>":
            return frame.lineno
    return None
