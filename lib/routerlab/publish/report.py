"""A dataset's README, generated from its files: what, where, when and how, the results
and their verdicts, what trial validation set aside, where the loss went, figures drawn
beside it, and the interpretation a person wrote in ``NOTES.md``.

Every number comes from :func:`routerlab.publish.facts.of`, which computes it with the library's
own functions; the text around the numbers is the template ``data/report.md.j2``. A
``NOTES.md`` beside the data is a jinja2 template over the same facts: it cites a measured
number only as a field (``{{ sweeps["bmv2-single-flow"].pdr.pps | pps }}``), a field that
does not exist fails the report naming it, and a number typed outside a field or a code
span fails it too (:func:`routerlab.publish.templates.typed_numbers`). ``routerlab report --check`` regenerates every
committed dataset's README and facts and fails on any difference.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path

from routerlab.errors import DataFormatError
from routerlab.publish.templates import environment, render_cited

#: The files a report writes into the dataset folder, beside the data.
README, FACTS, NOTES, FIGURES = "README.md", "facts.json", "NOTES.md", "figures"


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
    sections = dict.fromkeys(("campaign", "environment", "measured", "sweeps", "searches", "rankings", "agreement",
                              "causes_recorded",
                              "validation", "loss",
                              "engine_costs", "generators", "comparison", "microbench", "fast_reroute"))
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
