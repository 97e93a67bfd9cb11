"""The facts of a dataset folder: every number its report states, computed by the
library's own functions (:mod:`routerlab.analysis.stats`, the readers of :mod:`routerlab.analysis.datasets`,
:mod:`routerlab.analysis.comparison`, :mod:`routerlab.analysis.reroute`, :mod:`routerlab.analysis.microbench`, the benchmarks' summaries) where
they compute it; what only a report states (a median trial, counts of trials and attempts)
is computed here, once. A search's answer is what the search wrote (``search_results.csv``),
its repeats made one answer by :mod:`routerlab.analysis.repeats`, which ranks them too.

:func:`of` reads a folder and returns one nested dictionary of plain values (text,
numbers, lists, dictionaries): what :mod:`routerlab.publish.report` renders into the folder's
``README.md`` and its ``NOTES.md`` fields, and what it writes as ``facts.json``, so that
two runs of one dataset compare as two facts files (:func:`changes`).

Units: loads in packets per second (pps), durations in seconds, loss and other ratios in
[0, 1], CPU stops and lags in milliseconds.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from routerlab.analysis import datasets, stats
from routerlab.measuring.validation import SUPERSEDED_SEARCH_TRIALS, SUPERSEDED_TRIALS, TrialValidation

#: Significant digits a float keeps in ``facts.json``: enough for every figure a report
#: shows, few enough that the last bits of a sum taken in another order do not show.
DIGITS = 10


def _plain(x):
    """A value as JSON holds it: numpy scalars as Python ones, NaN as None, floats rounded
    to :data:`DIGITS` significant digits."""
    if isinstance(x, dict):
        return {str(k): _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    if isinstance(x, (np.bool_, bool)):
        return bool(x)
    if isinstance(x, (np.integer, int)):
        return int(x)
    if isinstance(x, (np.floating, float)):
        x = float(x)
        if math.isnan(x) or math.isinf(x):
            return None
        return float(f"{x:.{DIGITS}g}")
    if x is None or (isinstance(x, str)):
        return x
    if pd.isna(x):
        return None
    return str(x)


def _plain_facts(fn):
    """The section function's facts as :func:`_plain` values, as ``facts.json`` holds them."""
    import functools

    @functools.wraps(fn)
    def wrapper(*args, **kw):
        return _plain(fn(*args, **kw))
    return wrapper


def _first_part(versions: str) -> str:
    """The routerlab entry of a record's ``versions`` ("routerlab: 0.1.0 (git abc1234)")."""
    head = str(versions or "").split(";")[0].strip()
    return head.removeprefix("routerlab:").strip() if head.startswith("routerlab:") else ""


def _notes(text) -> dict:
    """An experiment's ``notes`` (``key=value; ...``) as a dict of text values; parts
    without ``=`` are kept under their position."""
    out = {}
    for i, part in enumerate(str(text or "").split("; ")):
        if "=" in part:
            k, v = part.split("=", 1)
            out[k.strip()] = v.strip()
        elif part.strip():
            out[f"note{i}"] = part.strip()
    return out


def _span(values) -> dict:
    """The first and last of some ISO 8601 time stamps (text), None where there are none."""
    t = pd.to_datetime(pd.Series(values).dropna().astype(str), utc=True, errors="coerce").dropna()
    if not len(t):
        return {"first": None, "last": None}
    return {"first": t.min().strftime("%Y-%m-%dT%H:%M:%SZ"), "last": t.max().strftime("%Y-%m-%dT%H:%M:%SZ")}


@_plain_facts
def campaign(folder) -> dict | None:
    """The campaign file kept beside the data (``campaign.yaml``): its SHA-256 and
    description, or None where the folder has none."""
    path = Path(folder) / "campaign.yaml"
    if not path.is_file():
        return None
    from routerlab import yamlfile

    raw = path.read_bytes()
    doc = yamlfile.parse(raw, path) or {}
    sha = hashlib.sha256(raw).hexdigest()
    records = datasets.read_experiments(folder) if (Path(folder) / "experiments.csv").is_file() else pd.DataFrame()
    named = records.get("campaign", pd.Series(dtype=str)).fillna("").astype(str)
    # a run of an earlier version of the file, resumed by this one after it gained steps
    # (routerlab.publish.campaign.grown): its records name that version
    others = named[named.str.startswith(f"{path.name} sha256:") & ~named.str.contains(sha, regex=False)]
    earlier = [{"sha256": label.split("sha256:", 1)[1], "experiments_named": int(n)}
               for label, n in others.value_counts(sort=False).items()]
    return {"file": path.name, "sha256": sha, "description": " ".join(str(doc.get("description", "")).split()),
            "ran": bool(named.str.contains(sha, regex=False).any()),
            "experiments_named": int(named.str.contains(sha, regex=False).sum()),
            **({"earlier": earlier} if earlier else {})}


@_plain_facts
def files(folder) -> dict:
    """Every data file of the folder and its rows (CSV: lines after the header)."""
    out = {}
    for p in sorted(Path(folder).glob("*.csv")):
        out[p.name] = int(len(pd.read_csv(p, usecols=[0])))
    return out


@_plain_facts
def environment(folder) -> dict:
    """How, where and when, from ``experiments.csv``: each experiment's record (engine,
    scenario, ceiling, command, notes as a dict) and what all of them share (``where``,
    ``kernel``, ``cpu``, ``pinning``, ``generator``, the routerlab that measured, the engine
    builds), each shared value given once, several joined by `` / ``."""
    e = datasets.read_experiments(folder)

    def shared(col):
        vals = [str(v) for v in pd.unique(e[col].fillna("").astype(str)) if str(v)] if col in e else []
        return " / ".join(vals)

    builds = {}
    for engines, versions in zip(e["engine"].fillna("").astype(str), e["engine_version"].fillna("").astype(str)):
        names = [x.strip() for x in engines.split(";") if x.strip()]
        parts = [x.strip() for x in versions.split(";") if x.strip()]
        if len(parts) == len(names):
            # one version per engine, in the order of the engines
            pairs = [(n, p.removeprefix(n + " ")) for n, p in zip(names, parts)]
        else:
            # more builds than engines ("bmv2 p4lang/behavioral-model@...; p4c p4lang/p4c@..."):
            # each names its own
            pairs = [p.partition(" ")[::2] for p in parts]
        for name, version in pairs:
            builds.setdefault(name, version)
    experiments = {}
    for r in e.to_dict("records"):
        experiments[r["experiment"]] = {
            "engine": r.get("engine") or "", "scenario": r.get("scenario") or "",
            "when": r.get("when") or "", "ceiling_pps": r.get("generator_ceiling_pps"),
            "frame_size": r.get("frame_size"), "command": r.get("command") or "",
            "notes": _notes(r.get("notes")), "campaign": r.get("campaign") or ""}
    return {"where": shared("where"), "kernel": shared("kernel"), "cpu": shared("cpu"),
            "pinning": shared("pinning"), "generator": shared("generator"),
            "source": shared("source"),
            "routerlab": " / ".join(dict.fromkeys(v for v in map(_first_part, e.get("versions", [])) if v)),
            "builds": builds, "experiments": experiments,
            "ceilings_pps": sorted({float(x) for x in e["generator_ceiling_pps"].dropna()}),
            "recorded": _span(e["when"])}


def _trials_with_loss(t: pd.DataFrame) -> pd.DataFrame:
    return t.assign(loss=stats.trial_loss(t["tx"].to_numpy(), t["rx"].to_numpy()),
                    limited=stats.flag(t["generator_limited"]).to_numpy() if "generator_limited" in t
                    else np.zeros(len(t), bool))


@_plain_facts
def sweeps(folder) -> dict:
    """Every sweep of ``trials.csv``: per experiment its engine and scenario, trials,
    PDR@0.5% and NDR (:func:`routerlab.analysis.stats.assess`, with whether each is a lower bound),
    the PASTRAMI verdict and its reason, and a row per load: K, mean loss and its 95%
    interval, the worst trial, the throughput (offered x (1 - mean loss), pps), the TIR,
    the router's mean CPU busy share and steal. Generator-limited trials are left out of
    the statistics, as :func:`routerlab.analysis.stats.assess` leaves them, and counted."""
    path = Path(folder) / "trials.csv"
    if not path.is_file():
        return {}
    t = _trials_with_loss(datasets.read(folder).trials)
    kept = t[~t["limited"]]
    out = {}
    for a in stats.assess(t):
        g = t[t["experiment"] == a.experiment]
        k = kept[kept["experiment"] == a.experiment]
        per = k.groupby("offered_pps")
        rows = []
        for s in a.summary.itertuples():
            trials = per.get_group(s.offered_pps)
            rows.append({"offered_pps": s.offered_pps, "runs": s.runs, "plr": s.plr, "lcl95": s.lcl95,
                         "ucl95": s.ucl95, "median": trials["loss"].median(), "worst": trials["loss"].max(),
                         "lossy": int((trials["loss"] > 0).sum()),
                         "rx_pps_median": (trials["rx"] / trials["duration_s"]).median() if "duration_s" in trials
                         else None,
                         "throughput_pps": s.throughput_pps, "tir": s.tir,
                         "cpu_load": trials["cpu_load"].mean() if "cpu_load" in trials else None,
                         "steal": trials["steal"].mean() if "steal" in trials else None})
        summ = a.summary
        crosses = stats.crosses(summ["lcl95"], summ["ucl95"], a.verdict.params.pdr)
        out[a.experiment] = {
            "uncertain_loads": summ.loc[crosses, "offered_pps"].tolist(),
            "engine": str(g["engine"].iloc[0]) if "engine" in g else "",
            "scenario": str(g["scenario"].iloc[0]) if "scenario" in g else "",
            "trials": len(g), "loads": len(a.summary), "runs": int(a.summary["runs"].max()),
            "duration_s": float(g["duration_s"].median()) if "duration_s" in g else None,
            "lowest_pps": float(g["offered_pps"].min()), "highest_pps": float(g["offered_pps"].max()),
            "generator_limited": int(g["limited"].sum()), "lossy_trials": int((k["loss"] > 0).sum()),
            "lost": int((g["tx"] - g["rx"]).clip(lower=0).sum()),
            "pdr": {"pps": a.pdr.load, "status": a.pdr.status, "text": str(a.pdr)},
            "ndr": {"pps": a.ndr.load, "status": a.ndr.status, "text": str(a.ndr)},
            "verdict": {"label": a.verdict.label, "why": a.verdict.why, "reason": a.verdict.reason,
                        "advice": a.verdict.advice},
            "saturation_pps": a.saturation_load, "notes": a.notes, "table": rows,
            "lost_in_limited": int((g.loc[g["limited"], "tx"] - g.loc[g["limited"], "rx"]).clip(lower=0).sum()),
            "trace_missed": int(g["trace_missed"].sum()) if "trace_missed" in g else None,
            "attributed": int(g["lost_attributed"].sum()) if "lost_attributed" in g else None,
            "unexplained": int(g["lost_unexplained"].sum()) if "lost_unexplained" in g else None,
            "engine_forwarded_is_rx": (int((g["engine_forwarded"] == g["rx"]).sum())
                                       if "engine_forwarded" in g and g["engine_forwarded"].notna().all() else None),
            "loss_by_counter": _by_counter(g.get("drops"))}
    return out


def _by_counter(summaries) -> dict:
    """Packets lost per counter (``place REASON``), most first, added up over trials'
    ``drops`` summaries (``place:REASON=packets;...``)."""
    from routerlab.measuring.drops import parse_summary

    total: dict[str, int] = {}
    for text in ([] if summaries is None else summaries):
        for name, n in parse_summary(text).items():
            key = name.replace(":", " ", 1)
            total[key] = total.get(key, 0) + n
    return dict(sorted(total.items(), key=lambda kv: (-kv[1], kv[0])))


@_plain_facts
def searches(folder) -> dict:
    """Every search of ``search_results.csv`` (:func:`routerlab.analysis.datasets.read_searches`),
    keyed by experiment, then kind (``pdr``, ``ndr``), then method (``routerlab``,
    ``mlrsearch``), its repeats made one answer (:mod:`routerlab.analysis.repeats`): the
    answer (``lower_pps``, the median of the repeats), the lowest failing load
    (``upper_pps``, the median of the repeats', None when a repeat had none), the relative
    precision (the median), the answer as every table shows it (``answer``), whether it is
    a lower bound and why (``at_least``, ``bound``); the repeats (``repeats``, each one's
    answer in ``each_pps``), the lowest and highest (``low_pps``, ``high_pps``), the 95%
    interval of their mean (``lcl95_pps``, ``ucl95_pps``) and the highest over the lowest
    (``spread``); the trials and trial-seconds of every repeat together, and the ceiling it
    searched under (pps)."""
    from routerlab.analysis import repeats

    out: dict = {}
    for r, g, p, set_aside in datasets.each_search(folder):
        extra = {}
        if p is not None:
            p = p.assign(loss=p["lost"] / p["tx"] if "lost" in p else 1 - p["rx"] / p["tx"])
            at_answer, at_failing = [], []
            full = repeats.full_length(p)
            for q in g.itertuples():
                fr = full[full["repeat"] == q.repeat]
                at_answer += fr.loc[fr["load"] == q.lower_pps, "loss"].tolist()
                at_failing += fr.loc[fr["load"] == q.upper_pps, "loss"].tolist()
            cause = ""
            if r["repeats"] > 1 and r["spread"] == r["spread"] and r["spread"] > repeats.SPREAD_GOAL:
                cause = repeats.cause_words(repeats.explain(g, p, set_aside), repeats.disagreement(g, p), r["answer"])
            extra = {"spread_cause": cause,
                     "generator_limited_trials": int(stats.flag(p["generator_limited"]).sum()),
                     "full_trial_s": p["duration"].max() if len(p) else None,
                     "losses_at_answer": at_answer, "losses_at_failing": at_failing,
                     "loss_by_counter": _by_counter(p.get("drops"))}
        uppers = pd.to_numeric(g["upper_pps"], errors="coerce")
        unbounded = bool(uppers.isna().any())
        gen = bool(g["generator_bound"].astype(bool).any())
        first = g.iloc[0]
        out.setdefault(r["experiment"], {}).setdefault(r["kind"], {})[r["method"]] = {
            "engine": r["engine"], "scenario": r["scenario"], "lower_pps": r["median_pps"],
            "upper_pps": None if unbounded else float(uppers.median()),
            "precision": pd.to_numeric(g["precision"], errors="coerce").median() if "precision" in g else None,
            "answer": r["words"], "at_least": bool(r["at_least"]),
            "bound": stats.LIMITED_BY_GENERATOR if gen else stats.PASSED_AT_CEILING if unbounded else "",
            "repeats": r["repeats"], "each_pps": g["lower_pps"].tolist(), "low_pps": r["low_pps"],
            "high_pps": r["high_pps"], "lcl95_pps": r["lcl95_pps"], "ucl95_pps": r["ucl95_pps"],
            "spread": r["spread"],
            "trials": int(pd.to_numeric(g["trials"], errors="coerce").sum()) if "trials" in g else None,
            "trial_seconds": float(pd.to_numeric(g["trial_seconds"], errors="coerce").sum()),
            "ceiling_pps": first.get("generator_ceiling_pps"), "when": g["when"].iloc[-1] if "when" in g else None,
            "target_precision": first.get("target_precision"), "final_trial_s": first.get("final_trial_s"), **extra}
    return out


def _ranked_sets(one) -> dict:
    """The searches of one dataset that rank against each other, by name: our own
    searches' (not MLRsearch's) of one kind, those of one ``bench engines`` run (its
    experiments ``bench-pdr-*``) together whatever their scenarios, the others by scenario;
    ``bench search``'s (``bench-search-*``) set our search against MLRsearch and rank
    nothing."""
    ours = one[(one["method"] == "routerlab") & ~one["experiment"].str.startswith("bench-search-")]
    sets: dict = {}
    for r in ours.itertuples():
        bench = r.experiment.startswith("bench-pdr-")
        name = f"bench engines {r.kind.upper()}" if bench else f"{r.kind.upper()} in {r.scenario}"
        sets.setdefault(name, []).append(r)
    return {k: v for k, v in sets.items() if len({x.experiment for x in v}) > 1}


@_plain_facts
def rankings(folder) -> dict:
    """The searches of a dataset ranked where their repeats separate
    (:func:`routerlab.analysis.repeats.rank`), one ranking per set that ranks together
    (:func:`_ranked_sets`): ``order`` (``a > b ≈ c``), ``rows`` (label, rank, median, range,
    repeats, spread, ties) and ``ties`` (how many labels share a rank with another)."""
    from routerlab.analysis import repeats

    one = repeats.from_searches(datasets.read_searches([folder]))
    out = {}
    for name, rows in _ranked_sets(one).items():
        engines = [r.engine for r in rows]
        scenarios = {r.scenario for r in rows}

        def label(r):
            # a router of one's own (exec) is named by its experiment, not "exec"
            lab = r.engine if engines.count(r.engine) == 1 and r.engine != "exec" else r.experiment
            return f"{lab} ({r.scenario})" if len(scenarios) > 1 else lab
        answers = {label(r): r.answer for r in rows}
        table = repeats.rank(answers)
        out[name] = {"order": repeats.order(answers),
                     "rows": table.drop(columns=["answer"]).to_dict("records"),
                     "ties": int((table["ties"] != "").sum()),
                     "repeats": sorted({a.n for a in answers.values()})}
    return out


@_plain_facts
def agreement(folder, sweep_facts: dict | None = None) -> dict:
    """Where one dataset holds a sweep and a PDR search of the same engine in the same
    scenario: the sweep's PDR next to the search's repeats
    (:func:`routerlab.analysis.repeats.sweep_against_search`), keyed ``sweep / search``:
    ``agree`` and the words that say both ranges and, when they do not meet, on which side
    the search fell. ``sweep_facts``: :func:`sweeps`' of the folder, when already made."""
    from routerlab.analysis import repeats

    sw = sweeps(folder) if sweep_facts is None else sweep_facts
    one = repeats.from_searches(datasets.read_searches([folder]))
    one = one[(one["kind"] == "pdr") & (one["method"] == "routerlab")]
    out = {}
    for exp, s in sw.items():
        match = one[(one["engine"] == s["engine"]) & (one["scenario"] == s["scenario"])]
        if not len(match) or s["pdr"]["status"] is None:
            continue
        loads = sorted(row["offered_pps"] for row in s["table"])
        bound = stats.RateBound(s["pdr"]["pps"], s["pdr"]["status"])
        if bound.status == "found":
            higher = [x for x in loads if x > bound.load]
            next_load = higher[0] if higher else None
        else:
            next_load = loads[0] if bound.status == "below_range" else None
        for r in match.itertuples():
            agree, words = repeats.sweep_against_search(bound, next_load, r.answer)
            out[f"{exp} / {r.experiment}"] = {"sweep": exp, "search": r.experiment, "agree": agree, "words": words,
                                              "verdict": s["verdict"]["label"]}
    return out


def _validated(kept: pd.DataFrame, again: pd.DataFrame, keys: list[str],
               rule: Callable[[str], TrialValidation]) -> dict:
    """What validation did to one set of attempts (kept, and set aside in ``again``),
    each judged by its experiment's ``rule``."""
    reasons = {"steal": 0, "stop": 0, "lag": 0}
    for row in again.to_dict("records"):
        why = rule(row.get("experiment")).why_disturbed(row)
        reasons["steal"] += "steal" in why
        reasons["stop"] += "CPU stopped" in why
        reasons["lag"] += "generator fell behind" in why
    steal = pd.to_numeric(kept.get("steal", pd.Series(dtype=float)), errors="coerce")
    both = pd.concat([kept, again], ignore_index=True)
    every = pd.to_numeric(both.get("steal", pd.Series(dtype=float)), errors="coerce")
    threshold = pd.Series([rule(x).steal_threshold for x in both.get("experiment", [None] * len(both))],
                          index=both.index, dtype=float)
    lost = pd.to_numeric(again.get("lost", pd.Series(dtype=float)), errors="coerce").fillna(0)
    return {"kept": len(kept), "set_aside": len(again),
            "measured_again": int(len(again.drop_duplicates(subset=[k for k in keys if k in again]))) if len(again) else 0,
            "kept_disturbed": int(stats.flag(kept["disturbed"]).sum()) if "disturbed" in kept else 0,
            "steal_mean": steal.mean(), "steal_max": steal.max(),
            "steal_above": int((every > threshold).sum()), "attempts": len(every),
            "set_aside_lossy": int((lost > 0).sum()), "set_aside_lost": int(lost.sum()),
            "set_aside_for": reasons}


@_plain_facts
def validation(folder) -> dict:
    """What trial validation did, for the sweeps (``sweep``) and the searches
    (``search``), and per experiment of each (``experiments``): attempts kept and set
    aside, trials measured again, kept attempts still ``disturbed``, the steal of kept
    attempts (mean and largest, ratios), attempts of every kind whose steal passed the
    threshold (``steal_above`` of ``attempts``), attempts set aside that lost packets and
    how many, and the attempts set aside by what disturbed them
    (:meth:`routerlab.measuring.validation.TrialValidation.why_disturbed` with the thresholds the
    folder's records give): ``steal``, ``stop`` (of the router's CPU), ``lag`` (of the
    generator); one attempt may count under several."""
    folder = Path(folder)
    out = {}
    rule = _rule(folder)
    for kind, kept_name, again_name, keys in (
            ("sweep", "trials.csv", SUPERSEDED_TRIALS, ["experiment", "offered_pps", "trial"]),
            ("search", "search_trials.csv", SUPERSEDED_SEARCH_TRIALS, ["experiment", "repeat", "probe"])):
        if not (folder / kept_name).is_file():
            continue
        kept = pd.read_csv(folder / kept_name)
        if kind == "search":
            kept = kept.assign(probe=kept.groupby("experiment").cumcount())
        again = pd.read_csv(folder / again_name) if (folder / again_name).is_file() else kept.iloc[:0]
        out[kind] = _validated(kept, again, keys, rule)
        out[kind]["experiments"] = {
            exp: _validated(k, again[again["experiment"] == exp], keys, rule)
            for exp, k in kept.groupby("experiment", sort=False)}
    return out


def _rule(folder) -> Callable[[str], TrialValidation]:
    """Per experiment, the validation thresholds it was measured with, from its record's
    notes (``steal_threshold``, ``probe_period_ms``, ``max_repeats``, ``stop_floor_ms``,
    ``generator_burst``, ``router_steal_held``): a threshold its record lacks is the folder's
    first record's that has it, else the default; a record without a stop floor was judged
    with its probe's period as the floor, one without a burst with none, one without
    ``router_steal_held`` without that rule (records made before they existed)."""
    e = datasets.read_experiments(folder) if (Path(folder) / "experiments.csv").is_file() else pd.DataFrame()
    keys = (("steal_threshold", float), ("probe_period_ms", float), ("max_repeats", int), ("stop_floor_ms", float),
            ("generator_burst", int), ("router_steal_held", lambda v: bool(int(float(v)))))
    own, folder_wide = {}, {}
    for exp, text in zip(e.get("experiment", []), e.get("notes", [])):
        n, given = _notes(text), {}
        for key, conv in keys:
            try:
                given[key] = conv(n[key])
            except (KeyError, ValueError):
                pass
        own.setdefault(exp, given)
        for key, value in given.items():
            if key not in ("stop_floor_ms", "generator_burst", "router_steal_held"):
                folder_wide.setdefault(key, value)

    @functools.cache
    def rule(exp: str) -> TrialValidation:
        given = {**folder_wide, **own.get(exp, {})}
        given.setdefault("stop_floor_ms", given.get("probe_period_ms", TrialValidation.probe_period_ms))
        given.setdefault("generator_burst", 0)
        given.setdefault("router_steal_held", False)
        return TrialValidation(**given)

    return rule


@_plain_facts
def loss(folder) -> dict:
    """Where the sweeps' lost packets went (``drops.csv`` and the trials' attribution
    columns): packets lost, attributed to a counter and unexplained (negative where the
    counters took more), the packets the drop-reason trace missed, and the lost packets per
    counter (``place REASON``), most first."""
    folder = Path(folder)
    if not (folder / "trials.csv").is_file():
        return {}
    t = pd.read_csv(folder / "trials.csv")
    if "lost_unexplained" not in t:
        return {}
    drops = datasets.read_drops([folder])
    lost = drops[drops["counted_as"] == "loss"]
    by = (lost.assign(where=lost["place"] + " " + lost["reason"]).groupby("where")["packets"].sum()
          .sort_values(ascending=False, kind="stable"))
    per = lost.assign(where=lost["place"] + " " + lost["reason"]).groupby(["experiment", "where"])["packets"].sum()
    experiments = {}
    for (exp, where), n in per.sort_values(ascending=False, kind="stable").items():
        experiments.setdefault(exp, {})[where] = int(n)
    return {"experiments": experiments, "lost": int(t["lost"].sum()), "attributed": int(t["lost_attributed"].sum()),
            "unexplained": int(t["lost_unexplained"].sum()),
            "trace_missed": int(t["trace_missed"].sum()) if "trace_missed" in t else None,
            "by_counter": {k: int(v) for k, v in by.items()}}


@_plain_facts
def engine_costs(folder) -> dict:
    """The engines' own time per packet (``engine_costs.csv``): per experiment and stage,
    the median ns per packet over its trials, and per load the median of ``graph`` (the
    engine's whole graph, the polling input left out); {} without the file."""
    folder = Path(folder)
    if not (folder / "engine_costs.csv").is_file():
        return {}
    c = datasets.read_kind(folder, "engine_costs.csv")
    out = {}
    for exp, g in c.groupby("experiment", sort=False):
        graph = g[g["stage"] == "graph"]
        out[exp] = {"stages": g.groupby("stage", sort=False)["ns_per_packet"].median().sort_values(ascending=False).to_dict(),
                    "graph_by_load": [{"offered_pps": o, "ns_per_packet": v}
                                      for o, v in graph.groupby("offered_pps")["ns_per_packet"].median().items()]}
    return out


def _repeated_capacity(a) -> dict:
    """A row's capacity over the repeats of its sweep: each, the lowest and highest
    (fractions of the ceiling; ``None`` for a repeat whose lowest load failed), and whether
    any is a lower bound."""
    if a is None:
        return {"repeats": 0}
    return {"repeats": a.n, "capacity_each": [None if v != v else v for v in a.values], "capacity_low": a.low,
            "capacity_high": a.highest_seen, "capacity_at_least": a.lower_bound}


@_plain_facts
def comparison(folder) -> dict:
    """The 100GE tables (``cells.csv`` beside the sweeps): per scenario and router the
    capacity at PDR@0.5% on the loads as fractions of the ceiling (:func:`routerlab.
    comparison.capacity`), the verdict, grey cells and why, and the rankings, published
    next to ours (:func:`routerlab.analysis.comparison.orderings`)."""
    if not (Path(folder) / "cells.csv").is_file():
        return {}
    from routerlab.analysis import comparison as cmp

    ours = cmp.ours(folder)
    cap = cmp.capacity(ours)
    reps = cmp.repeated_capacity(ours)
    ver = cmp.verdicts(ours).set_index(["scenario", "router"])
    presets = cmp.scenarios(folder)
    cells = {}
    for r in cap.itertuples():
        v = ver.loc[(r.scenario, r.router)]
        row = ours[(ours["scenario"] == r.scenario) & (ours["router"] == r.router)]
        cells.setdefault(r.scenario, {})[r.router] = {
            "experiment": f"{r.router}-{presets.get(r.scenario, r.scenario)}",
            "capacity": r.capacity, "status": r.status, "verdict": v["verdict"], "grey": v["grey"],
            **_repeated_capacity(reps.get((r.scenario, r.router))),
            "uncertain": int(row["uncertain"].sum()),
            "colours": {c: int(n) for c, n in row["colour"].value_counts().sort_index().items()}}
    rank = cmp.orderings(cmp.published(), ours)
    col = rank.columns[-1]
    rankings = {}
    for r in rank.itertuples(index=False):
        rankings.setdefault(r.scenario, {})[r.source] = r[2]
    return {"cells": cells, "rankings": rankings, "ranking_rule": col}


@_plain_facts
def microbench(folder) -> dict:
    """The in-memory microbenchmarks' files, as their commands summarise them: forwarding
    (:func:`routerlab.analysis.microbench.summary`: per engine the median Mpps over the
    repeats and the instructions per packet, keyed "ENGINE burst N", with the MoonRoute
    poster's table as ``forwarding_published``), batch sizes
    (:func:`routerlab.analysis.microbench.batch_table`, keyed "fastclick burst N") and
    header-action consolidation (:func:`routerlab.analysis.microbench.reductions`, with FastPath's
    published reductions as ``consolidation_published``)."""
    folder = Path(folder)
    out = {}
    if (folder / "forwarding.csv").is_file():
        from routerlab.analysis import microbench as forwarding

        raw = datasets.read_microbench(folder, "forwarding")
        ours, pub, _ = forwarding.summary(raw)
        bursts = raw.groupby("engine")["burst"].first()
        repeats = raw.groupby("engine").size()
        out["forwarding"] = {f"{r['engine']} burst {bursts[r['engine']]}": {
            "engine": r["engine"], "burst": bursts[r["engine"]], "mpps": r["mpps"],
            "instructions_per_packet": r["instructions_per_packet"], "repeats": repeats[r["engine"]],
            "ratio_to_fastest": r["ratio_to_fastest"]} for r in ours.to_dict("records")}
        out["forwarding_published"] = {r["router"]: {"mpps": r["mpps"], "ratio_to_fastest": r["ratio_to_fastest"]}
                                       for r in pub.to_dict("records")}
    if (folder / "batch.csv").is_file():
        from routerlab.analysis import microbench as forwarding

        raw = datasets.read_microbench(folder, "batch")
        engine = str(raw["engine"].iloc[0])
        out["batch"] = {f"{engine} burst {r['burst']}": {"engine": engine, **r}
                        for r in forwarding.batch_table(raw).to_dict("records")}
    if (folder / "consolidation.csv").is_file():
        from routerlab.analysis import microbench as mb

        red = mb.reductions(datasets.read_microbench(folder, "consolidation"))
        out["consolidation"] = red.to_dict("records")
        out["consolidation_published"] = datasets.reference("fastpath-consolidation").to_dict("records")
    return out


@_plain_facts
def fast_reroute(folder) -> dict:
    """The fast-reroute runs (``runs.csv``, ``samples.csv``): per variant the summary
    :func:`routerlab.analysis.reroute.summary` prints."""
    folder = Path(folder)
    if not (folder / "runs.csv").is_file() or not (folder / "samples.csv").is_file():
        return {}
    from routerlab.analysis import reroute

    samples, runs = datasets.read_fast_reroute(folder)
    table, _ = reroute.summary(samples, runs)
    return {"variants": {r["variant"]: r for r in table.to_dict("records")}, "runs": len(runs)}


@_plain_facts
def generators(folder) -> dict:
    """The generators' rate accuracy (``generators.csv``, written by ``routerlab bench
    generators``): per generator and fraction of the ceiling, the requested rate (pps) and
    the median rate error (achieved / requested - 1, a signed ratio) over the trials."""
    path = Path(folder) / "generators.csv"
    if not path.is_file():
        return {}
    df = pd.read_csv(path)
    out: dict = {}
    for (gen, frac), g in df.groupby(["generator", "fraction"]):
        out.setdefault(gen, {})[f"{frac:g}"] = {"requested_pps": g["requested_pps"].median(),
                                                "rate_error": g["rate_error"].median(), "trials": len(g)}
    return out


def _runs(folder, stamped: pd.DataFrame) -> list[dict]:
    """Per version of the campaign file the records name (``experiments.csv``'s
    ``campaign``), the span of its experiments' time stamps (``stamped``: ``experiment``
    and ``at``, the trials' starts and the searches' ends), in the order they ran: one for
    a folder measured by one run, more for a run resumed after its file gained steps
    (records made outside a campaign are left out). Each: ``campaign`` (the SHA-256's
    first 12 digits), ``first``, ``last``."""
    records = datasets.read_experiments(folder)
    if "campaign" not in records:
        return []
    out = []
    labels = records["campaign"].fillna("").astype(str)
    for label, exps in records[labels.str.startswith("campaign.yaml sha256:")].groupby(labels)["experiment"]:
        span = _span(stamped.loc[stamped["experiment"].isin(set(exps)), "at"])
        if span["first"]:
            out.append({"campaign": label.split("sha256:", 1)[-1][:12], **span})
    return sorted(out, key=lambda r: r["first"])


def of(folder) -> dict:
    """Every fact of a dataset folder, in plain values (see the module's docstring);
    sections whose files the folder lacks are left out."""
    folder = Path(folder)
    out = {"dataset": folder.resolve().name, "files": files(folder)}
    sw = sweeps(folder)
    parts = {"campaign": campaign(folder),
             "environment": environment(folder) if (folder / "experiments.csv").is_file() else None,
             "sweeps": sw, "searches": searches(folder), "rankings": rankings(folder),
             "agreement": agreement(folder, sw), "validation": validation(folder),
             "loss": loss(folder), "engine_costs": engine_costs(folder), "generators": generators(folder), "comparison": comparison(folder), "microbench": microbench(folder),
             "fast_reroute": fast_reroute(folder)}
    if "trials.csv" in out["files"] or "search_trials.csv" in out["files"]:
        read = {k: pd.read_csv(folder / k) for k in ("trials.csv", "search_trials.csv", "search_results.csv")
                if (folder / k).is_file()}
        stamped = pd.concat([df[["experiment", col]].rename(columns={col: "at"}) for k, df in read.items()
                             if (col := "when" if k == "search_results.csv" else "started_at") in df]
                            or [pd.DataFrame(columns=["experiment", "at"])])
        parts["measured"] = _span(stamped["at"])
        runs = _runs(folder, stamped)
        if len(runs) > 1:
            parts["measured"]["runs"] = runs
        if "search_trials.csv" in read:
            from routerlab.analysis import repeats

            # what the searches' trials recorded of the machine's causes (older datasets lack some)
            st = read["search_trials.csv"]
            parts["causes_recorded"] = [c for c in repeats.MACHINE_CAUSES if c in st and st[c].notna().any()]
    out.update({k: v for k, v in parts.items() if v})
    return out


def dumps(facts: dict) -> str:
    """``facts.json``'s text: keys in the order the facts give them, two-space indents,
    a final newline."""
    return json.dumps(facts, indent=2, ensure_ascii=False) + "\n"


def changes(old: dict, new: dict, prefix: str = "") -> list[tuple[str, object, object]]:
    """What differs between two facts (two runs of one dataset): ``(path, old, new)`` for
    every leaf that changed, appeared (old None) or went (new None), in the order of the
    newer facts; lists are compared item by item."""
    out = []
    if isinstance(old, dict) and isinstance(new, dict):
        for k in list(new) + [k for k in old if k not in new]:
            out += changes(old.get(k), new.get(k), f"{prefix}.{k}" if prefix else str(k))
    elif isinstance(old, list) and isinstance(new, list):
        for i in range(max(len(old), len(new))):
            out += changes(old[i] if i < len(old) else None, new[i] if i < len(new) else None, f"{prefix}[{i}]")
    elif old != new:
        out.append((prefix, old, new))
    return out
