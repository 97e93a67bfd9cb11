"""A dataset's README, generated from its files: what, where, when and how, the results
and their verdicts, what trial validation set aside, where the loss went, figures drawn
beside it, and the interpretation a person wrote in ``NOTES.md``.

Every number comes from :func:`routerlab.publish.facts.of`, which computes it with the library's
own functions; the text around the numbers is the template ``data/report.md.j2``. A
``NOTES.md`` beside the data is a jinja2 template over the same facts: it cites a measured
number only as a field (``{{ sweeps["bmv2-single-flow"].pdr.pps | pps }}``), a field that
does not exist fails the report naming it, and a number typed outside a field or a code
span fails it too (:func:`typed_numbers`). ``routerlab report --check`` regenerates every
committed dataset's README and facts and fails on any difference.
"""

from __future__ import annotations

import difflib
import math
import re
from dataclasses import dataclass
from pathlib import Path

from routerlab.errors import DataFormatError

#: The files a report writes into the dataset folder, beside the data.
README, FACTS, NOTES, FIGURES = "README.md", "facts.json", "NOTES.md", "figures"


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


def _template_text() -> str:
    from importlib.resources import files

    return files("routerlab").joinpath("data", "report.md.j2").read_text()


def notes(folder, facts: dict) -> str:
    """``NOTES.md`` of a dataset rendered over its facts ("" when the folder has none).

    Raises
    ------
    DataFormatError
        Naming ``NOTES.md`` and the line: a field the facts do not have, a template error,
        or a number typed outside a field.
    """
    path = Path(folder) / NOTES
    if not path.is_file():
        return ""
    return render_cited(path.read_text(), facts, path, FACTS).strip() + "\n"


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


def figures(folder, facts: dict, *, draw: bool = True) -> list[dict]:
    """The figures of a report (``[{"file": "figures/x.png", "caption": ...}]``), drawn
    into ``folder/figures`` when ``draw`` (with ``draw=False`` only their names, which the
    README links). The sweeps, at most eight to a figure (the comparison's 28 in scenario
    groups), the batch curve of the microbenchmarks, the fast-reroute time series."""
    folder = Path(folder)
    out = []
    groups = _sweep_groups(facts.get("sweeps", {}))
    for name, experiments in groups:
        out.append({"file": f"{FIGURES}/sweeps-{name}.png", "kind": "sweeps", "experiments": experiments,
                    "caption": f"Mean loss against offered load, {', '.join(experiments)}: the band is the 95% "
                               "interval, the legend gives each sweep's verdict."})
    if "batch" in facts.get("microbench", {}):
        out.append({"file": f"{FIGURES}/batch.png", "kind": "batch",
                    "caption": "FastClick's forwarding rate against its batch size (median of the repeats)."})
    if facts.get("fast_reroute"):
        out.append({"file": f"{FIGURES}/fast-reroute.png", "kind": "reroute",
                    "caption": "Throughput and RTT over time, per variant: the link fails, then the control plane "
                               "converges."})
    if draw and out:
        _draw(folder, facts, out)
    return out


def _sweep_groups(sweeps: dict) -> list[tuple[str, list[str]]]:
    """Sweeps grouped for figures: by scenario, then at most eight to a figure."""
    by: dict[str, list[str]] = {}
    for exp, s in sweeps.items():
        by.setdefault(s["scenario"] or "sweeps", []).append(exp)
    out = []
    for scenario, exps in by.items():
        chunks = [exps[i:i + 8] for i in range(0, len(exps), 8)]
        for i, chunk in enumerate(chunks):
            out.append((scenario + (f"-{i + 1}" if len(chunks) > 1 else ""), chunk))
    return out


def _draw(folder: Path, facts: dict, todo: list[dict]):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from routerlab.analysis import datasets, plots, stats

    (folder / FIGURES).mkdir(exist_ok=True)
    for fig_spec in todo:
        if fig_spec["kind"] == "sweeps":
            t = datasets.read(folder).trials
            a = stats.assess(t[t["experiment"].isin(fig_spec["experiments"])])
            fig = plots.sweeps(stats.summaries(a), stats.records(a))
        elif fig_spec["kind"] == "batch":
            fig = plots.batch_curve(datasets.read_microbench(folder, "batch"))
        else:
            samples, _ = datasets.read_fast_reroute(folder)
            fig = plots.reroute_timeseries(samples)
        fig = getattr(fig, "figure", fig)
        fig.savefig(folder / fig_spec["file"], dpi=80, metadata={"Software": None})
        plt.close(fig)


def render(folder, facts: dict | None = None) -> str:
    """The README of a dataset folder, as text (nothing written)."""
    from routerlab.publish import facts as facts_mod

    folder = Path(folder)
    facts = facts if facts is not None else facts_mod.of(folder)
    # the template asks for every section; a folder without its files has none of it
    sections = dict.fromkeys(("campaign", "environment", "measured", "sweeps", "searches", "validation", "loss",
                              "generators", "comparison", "microbench", "fast_reroute"))
    context = dict(sections, **facts, notes_md=notes(folder, facts), figures=figures(folder, facts, draw=False))
    return environment().from_string(_template_text()).render(**context).rstrip() + "\n"


@dataclass
class Written:
    """What :func:`write` wrote: the README, the facts and the figures (paths)."""

    readme: Path
    facts: Path
    figures: list[Path]


def write(folder, *, draw: bool = True) -> Written:
    """Generate ``README.md``, ``facts.json`` and the figures of a dataset folder."""
    from routerlab.publish import facts as facts_mod

    folder = Path(folder)
    if not (folder / "experiments.csv").is_file():
        raise DataFormatError(folder / "experiments.csv", None, "no such file: a dataset folder has one "
                              "(routerlab writes it with every measurement)")
    f = facts_mod.of(folder)
    figs = figures(folder, f, draw=draw)
    (folder / FACTS).write_text(facts_mod.dumps(f))
    (folder / README).write_text(render(folder, f))
    return Written(folder / README, folder / FACTS, [folder / x["file"] for x in figs])


def check(folder) -> list[str]:
    """The differences between a dataset folder's committed ``README.md`` and
    ``facts.json`` and what :func:`write` would write now, as unified diffs (empty: they
    match), and every linked figure that is missing."""
    from routerlab.publish import facts as facts_mod

    folder = Path(folder)
    f = facts_mod.of(folder)
    out = []
    for name, text in ((FACTS, facts_mod.dumps(f)), (README, render(folder, f))):
        path = folder / name
        old = path.read_text() if path.is_file() else ""
        if old != text:
            out.append("".join(difflib.unified_diff(old.splitlines(True), text.splitlines(True),
                                                    f"{path} (committed)", f"{path} (generated)")))
    for fig in figures(folder, f, draw=False):
        if not (folder / fig["file"]).is_file():
            out.append(f"{folder / fig['file']}: linked from {README} but missing (run routerlab report {folder})\n")
    return out


def committed() -> list[Path]:
    """The measured datasets the project carries (a clone's ``datasets/``, or those
    bundled with an installed routerlab): every folder with an ``experiments.csv``."""
    from routerlab.analysis import datasets

    return sorted(p.parent for p in datasets.datasets_dir().glob("*/experiments.csv"))
