"""The inputs of ``assess`` (and of ``measure``'s closing lines) assessed: each PASTRAMI raw
file and routerlab dataset read, every experiment in it judged by
:func:`routerlab.analysis.stats.assess`, with where its loss went and whether its loads
reached the generator's ceiling. Data only; the command line words it."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from routerlab.analysis import datasets, stats

#: A sweep whose highest load is at least this share of the generator's ceiling has
#: offered all the generator can: "add loads up to the ceiling" is no advice for it.
GENERATOR_REACHED = 0.99


@dataclass(frozen=True)
class Assessed:
    """One experiment of one input, assessed.

    ``name``: the input's path, or ``path::experiment`` when the input holds several;
    ``assessment``: the verdict, PDR and summary; ``reached_ceiling``: the generator's
    ceiling (pps) when the sweep's loads reached it (:data:`GENERATOR_REACHED`), else
    None; ``loss_at``: for a sweep measured with the loss attribution, where its worst
    load's loss went (:func:`loss_places`), else None."""

    name: str
    assessment: stats.Assessment
    reached_ceiling: float | None = None
    loss_at: dict | None = None


@dataclass(frozen=True)
class Unreadable:
    """An input that could not be read: its path and why (a
    :class:`routerlab.errors.DataFormatError`)."""

    name: str
    error: Exception


def assess_inputs(paths: list[Path], params: stats.VerdictParams, fmt: str = "auto") -> Iterator[Assessed | Unreadable]:
    """Every experiment of ``paths`` (:func:`routerlab.analysis.datasets.read_inputs`;
    ``fmt``: auto, pastrami or routerlab) assessed with ``params``, in the order given,
    each as soon as it is (a caller can show one before the next is judged); an input
    that cannot be read is an :class:`Unreadable` in its place and hides none of the
    others.

    Every PASTRAMI raw file among ``paths`` is assessed in one batch (one
    :func:`stats.assess` over all their trials); each still comes under its own name."""
    entries, raw = datasets.read_inputs(paths, fmt)
    # In the batch a raw file's experiment is its entry's key, so that no two files are
    # pooled (same name in two folders, one file named twice); it is named by its file
    # name, as when it is assessed alone.
    batch = {} if raw is None else {a.experiment: a for a in stats.assess(raw, params=params)}
    for label, trials, error, key in entries:
        if error is not None:
            yield Unreadable(label, error)
            continue
        if trials is None:
            found = [replace(batch[key], experiment=Path(label).name.removesuffix(".txt"))]
        else:
            found = stats.assess(trials, params=params)
        ceilings = _ceilings(label, trials)
        for a in found:
            whole = trials is None or a.experiment in (Path(label).stem, "experiment")
            ceiling = ceilings.get(a.experiment)
            top = float(a.summary["offered_pps"].max()) if len(a.summary) else None
            yield Assessed(label if whole else f"{label}::{a.experiment}", a,
                           ceiling if ceiling and top and top >= GENERATOR_REACHED * ceiling else None,
                           loss_places(label, trials, a.experiment))


def loss_places(label: str, trials, experiment: str) -> dict | None:
    """Where the loss of a testbed sweep's worst load went, for a sweep measured with the
    loss attribution (:func:`routerlab.analysis.stats.loss_places`): ``offered_pps`` and
    ``places`` (counter -> mean loss ratio, largest first; empty when nothing was lost);
    None for data without it."""
    if trials is None or "lost_unexplained" not in trials or trials["lost_unexplained"].isna().all():
        return None
    folder = Path(label) if Path(label).is_dir() else Path(label).parent
    places = stats.loss_places(trials[trials["experiment"] == experiment], datasets.read_drops([folder]))
    if places.empty:
        return None
    totals = places.groupby("offered_pps")["loss"].apply(lambda x: x.clip(lower=0).sum())
    worst = places[(places["offered_pps"] == totals.idxmax()) & (places["loss"] != 0)]
    return {"offered_pps": float(totals.idxmax()),
            "places": dict(worst.sort_values("loss", ascending=False)[["where", "loss"]].itertuples(index=False))}


def _ceilings(label: str, trials) -> dict:
    """Experiment -> the generator's ceiling (pps) from a routerlab dataset's environment
    record; empty for other data."""
    if trials is None:
        return {}
    folder = Path(label) if Path(label).is_dir() else Path(label).parent
    if not (folder / "experiments.csv").is_file():
        return {}
    rec = datasets.read_experiments(folder)
    if "generator_ceiling_pps" not in rec:
        return {}
    c = rec.set_index("experiment")["generator_ceiling_pps"]
    return {k: float(v) for k, v in c.items() if v == v and v}
