"""The journal's two lists, made from its folder when the site is built (mkdocs.yml `hooks:`).

An entry is a file ``docs/journal/YYYY-MM-DD-name.md`` whose first heading is its title.
The Journal section of the site's nav and the list of entries in
``docs/journal/README.md`` (where it holds :data:`MARKER`) are made from the folder, newest
first (by file name, so the entries of one day in reverse order of their names): a new
entry needs no edit anywhere else. ``tests/test_docs.py`` builds a site with an entry
added and finds it in both.
"""

from __future__ import annotations

import re
from pathlib import Path

from mkdocs.exceptions import PluginError

#: The journal's folder under docs/, and its index page.
FOLDER = "journal"
INDEX = f"{FOLDER}/README.md"
#: The line of the index page that the list of entries replaces.
MARKER = "<!-- journal entries: made from the folder when the site is built (scripts/mkdocs_journal.py) -->"

_NAME = re.compile(r"^(\d{4}-\d{2}-\d{2})-[a-z0-9][a-z0-9-]*\.md$")
_HEADING = re.compile(r"^#{1,6}\s+(.+?)(?:\s+#+)?\s*$", re.M)
_FENCE = re.compile(r"^```.*?^```", re.M | re.S)


def entries(docs_dir: str | Path) -> list[tuple[str, str, str]]:
    """Every journal entry, newest first.

    Parameters
    ----------
    docs_dir : str or pathlib.Path
        The site's docs folder.

    Returns
    -------
    list of (str, str, str)
        ``(date, title, name)``: the date of its file name, its first heading (markdown,
        without a leading ``date:`` of its own) and its file name.

    Raises
    ------
    mkdocs.exceptions.PluginError
        An entry whose file name is not ``YYYY-MM-DD-name.md``, or which has no heading.
    """
    folder = Path(docs_dir) / FOLDER
    found = []
    for md in sorted(folder.glob("*.md"), reverse=True):
        if md.name == "README.md":
            continue
        name = _NAME.match(md.name)
        if not name:
            raise PluginError(f"docs/{FOLDER}/{md.name}: a journal entry is named YYYY-MM-DD-name.md "
                              "(lower-case words joined by hyphens)")
        heading = _HEADING.search(_FENCE.sub("", md.read_text()))
        if not heading:
            raise PluginError(f"docs/{FOLDER}/{md.name}: no heading; its first heading (`# Title`) is its title")
        date = name.group(1)
        title = heading.group(1).removeprefix(f"{date}:").strip()
        found.append((date, title, md.name))
    return found


def nav_title(date: str, title: str) -> str:
    """An entry's title in the nav, which is plain text: its date, then its title without
    markdown's code marks."""
    return f"{date}: " + re.sub(r"`([^`]*)`", r"\1", title)


def _section(nav) -> list | None:
    """The list of the nav that holds the journal's index page, or None."""
    if isinstance(nav, list):
        if any(item == INDEX or (isinstance(item, dict) and INDEX in item.values()) for item in nav):
            return nav
        items = nav
    elif isinstance(nav, dict):
        items = nav.values()
    else:
        return None
    for item in items:
        found = _section(item)
        if found is not None:
            return found
    return None


def on_config(config):
    """Fill the nav's Journal section (the one holding ``journal/README.md``) with the
    folder's entries. A hand-listed entry there is refused: the folder is the one list."""
    section = _section(config.nav)
    if section is None:
        raise PluginError(f"mkdocs.yml: no nav section holds {INDEX}, which heads the journal's entries")
    listed = [item for item in section if item != INDEX and not (isinstance(item, dict) and INDEX in item.values())]
    if listed:
        raise PluginError(f"mkdocs.yml: the nav section of {INDEX} lists {listed!r}; it holds only {INDEX}, "
                          "and the entries are added from the folder (scripts/mkdocs_journal.py)")
    section.extend({nav_title(date, title): f"{FOLDER}/{name}"} for date, title, name in entries(config.docs_dir))
    return config


def on_page_markdown(markdown, page, config, files):
    """Replace :data:`MARKER` in ``journal/README.md`` with its list of entries."""
    if page.file.src_uri != INDEX:
        return markdown
    if markdown.count(MARKER) != 1:
        raise PluginError(f"docs/{INDEX}: holds the line {MARKER!r} once, where its list of entries goes")
    lines = [f"- {date} [{title}]({name})" for date, title, name in entries(config.docs_dir)]
    return markdown.replace(MARKER, "\n".join(lines))
