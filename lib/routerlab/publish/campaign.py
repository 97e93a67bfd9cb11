"""Running a campaign file: its steps in order into one dataset folder, how long that
takes, and resuming it after an interruption.

A campaign file (:mod:`routerlab.measuring.campaignfile`, read and checked by :func:`load`) lists
the commands that make a dataset. ``routerlab campaign run FILE --out DIR`` calls
:func:`run`, which

1. refuses a folder that holds another campaign, and checks every step's engine and
   scenario on this machine (built, able), and root, before anything runs;
2. copies the file to ``DIR/campaign.yaml``; every environment record written meanwhile
   names it, with its SHA-256, in the ``campaign`` column of ``experiments.csv``
   (:func:`routerlab.analysis.datasets.running_campaign`);
3. measures the generator's ceiling once when the file says ``ceiling: measure``;
4. runs each step by calling the library, as its command would
   (:func:`routerlab.measuring.measurement.measure`, the ``bench`` modules,
   :func:`routerlab.measuring.comparison.campaign`, :func:`routerlab.measuring.fastreroute.experiment`),
   and records it finished in ``DIR/campaign-progress.yaml``, with the ceiling.

Interrupted, it loses nothing: run again, it skips the steps recorded finished, reuses
the recorded ceiling, and the step it stopped in resumes as its command does (a sweep
keeps its finished trials; a search, a benchmark run again). A file that has since gained
steps at its end resumes the same way (:func:`grown`): the records of the steps run before
name the earlier file, the others the file as it is now.

:func:`estimate` says how long a campaign takes, from its steps: the trials' own seconds
plus the time around them, fitted to the run that measured the committed datasets.
"""

from __future__ import annotations

import hashlib
import inspect
import math
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import yaml

from routerlab.analysis import datasets
from routerlab import defaults, yamlfile
from routerlab.measuring.campaignfile import Campaign, FILE_NAME, load, Step  # noqa: F401  (load: the command's way in)
from routerlab.errors import ParameterError, RouterlabError
import routerlab.progress

#: The bookkeeping of a run in its dataset folder: the ceiling, the steps finished.
PROGRESS_FILE = "campaign-progress.yaml"

# -- how long a campaign takes -----------------------------------------------------------
# The time around the trials, fitted to the one run that measured the five testbed
# datasets (2026-11-26, 2 vCPUs, the machine to itself, the datasets' READMEs): testbed-click,
# click-course, testbed-bmv2 and testbed-veth took 42 minutes, the comparison 43; these
# constants estimate 46 and 40 (their campaign files, tests/test_campaign.py).

#: Seconds between two trials, besides the trial (the generator's start, the counters read
#: around it, a disturbed trial measured again): the gaps between trials in those
#: datasets' trials.csv are 0.3 to 1.1 s, 0.5 s typically.
TRIAL_GAP_S = 0.5
#: Seconds to bring a testbed up with its engine (namespaces, the router's start, its
#: tables) and down again: once per sweep, search, comparison cell and engine of ``bench engines``.
BRING_UP_S = 5.0
#: Seconds to measure the generator's ceiling (:func:`routerlab.testbed.ceiling.measure`: three
#: trials of 2 s on a testbed of its own).
CEILING_S = 3 * 2.0 + BRING_UP_S
#: Seconds per timed run of a microbenchmark from memory (2026-11-22, datasets/microbench:
#: batch's 45 runs of 3 M packets in 65 s, consolidation's 54 runs in 117 s).
MICROBENCH_RUN_S = 2.0
#: Seconds around each fast-reroute run besides its own duration (2026-11-22,
#: datasets/fast-reroute: 40 runs of 30 s in 23 minutes).
REROUTE_GAP_S = 5.0


@dataclass(frozen=True)
class Estimate:
    """How long one step (or the ceiling's measurement, ``step`` None) takes: ``trials``
    (``unit``: testbed trials, or a microbenchmark's or fast reroute's runs) and their own
    ``trial_seconds``, plus ``overhead_seconds`` around them (:data:`TRIAL_GAP_S`,
    :data:`BRING_UP_S`, :data:`CEILING_S`)."""

    step: Step | None
    trials: int
    trial_seconds: float
    overhead_seconds: float
    unit: str = "trials"

    @property
    def seconds(self) -> float:
        return self.trial_seconds + self.overhead_seconds


def _default(fn: Callable, name: str):
    """A parameter's default in the library function a step calls: the one a key the file
    leaves out takes."""
    return inspect.signature(fn).parameters[name].default


#: Loads a search tries at full duration, typically: both ends of the short trials'
#: bracket and one step of widening at each, as the searches of the testbed datasets
#: measured on 2026-12-06 took them (about 24 trials a search where the two ends alone
#: would take 17).
FINAL_LOADS = 4


def search_budget(final_duration: float) -> tuple[int, float]:
    """Trials and trial-seconds, typically, of one of our searches (:func:`routerlab.measuring.search.bisect`,
    with :func:`routerlab.measuring.search.run_search`'s range and precision: from
    :data:`routerlab.defaults.SEARCH_LOW_FRACTION` of the ceiling to the ceiling): short
    trials bisect the range down to the precision, then ``final_trials`` trials of
    ``final_duration`` s at each of :data:`FINAL_LOADS` loads (a load whose first trials
    agree takes fewer). A router that passes at the ceiling takes less. MLRsearch is
    counted the same."""
    from routerlab.measuring import search

    precision = _default(search.run_search, "precision")
    final_trials = _default(search.run_search, "final_trials")
    short = _default(search.bisect, "short_duration")
    # geometric bisection halves log(high / low) until (high - low) / high <= precision
    halvings = math.ceil(math.log2(math.log(1 / defaults.SEARCH_LOW_FRACTION) / -math.log(1 - precision)))
    short_trials = 2 + halvings
    final_trials_n = FINAL_LOADS * final_trials
    return short_trials + final_trials_n, short_trials * short + final_trials_n * final_duration


def _on_testbed(step, trials: int, seconds: float, bring_ups: int, ceilings: int) -> Estimate:
    return Estimate(step, trials, seconds, trials * TRIAL_GAP_S + bring_ups * BRING_UP_S + ceilings * CEILING_S)


def _searches(step, n: int, duration: float, bring_ups: int, ceilings: int) -> Estimate:
    trials, seconds = search_budget(duration)
    return _on_testbed(step, n * trials, n * seconds, bring_ups, ceilings)


def _estimate_measure(step: Step, ceiling: bool) -> Estimate:
    from routerlab.measuring import measurement

    o = step.options
    duration = o.get("duration", _default(measurement.Request, "duration"))
    # without the campaign's ceiling, a step measures its own (a sweep at fixed loads too)
    if "search" in o:
        # each repeat on a testbed of its own
        r = o.get("repeats", defaults.SEARCH_REPEATS)
        return _searches(step, r * (2 if o["search"] == "both" else 1), duration, r, 0 if ceiling else 1)
    trials = len(o.get("loads") or o["loads_frac"]) * o.get("runs", _default(measurement.Request, "runs"))
    return _on_testbed(step, trials, trials * duration, 1, 0 if ceiling else 1)


def _estimate_bench_engines(step: Step, ceiling: bool) -> Estimate:
    from routerlab.benchmarks import engines

    names = step.options.get("engines", _default(engines.run, "engine_names"))
    r = step.options.get("repeats", _default(engines.run, "repeats"))
    # repeated PDR searches per engine, after a ceiling of its own
    return _searches(step, r * len(names), step.options.get("duration", _default(engines.run, "duration")),
                     r * len(names), 1)


def _estimate_bench_search(step: Step, ceiling: bool) -> Estimate:
    from routerlab.measuring import measurement

    kinds = 2 if step.options["kind"] == "both" else 1
    # our search and MLRsearch, each kind, after a ceiling of its own
    return _searches(step, 2 * kinds, step.options.get("duration", _default(measurement.Request, "duration")), 1, 1)


def _microbench(step: Step, runs: int) -> Estimate:
    return Estimate(step, runs, runs * MICROBENCH_RUN_S, 0.0, "timed runs")


def _estimate_forwarding(step: Step, ceiling: bool) -> Estimate:
    from routerlab.measuring import microbench
    from routerlab.benchmarks import forwarding

    names = step.options.get("engines", _default(forwarding.table, "engine_names"))
    return _microbench(step, len(names) * step.options.get("repeats", _default(microbench.forwarding, "repeats")))


def _estimate_batch(step: Step, ceiling: bool) -> Estimate:
    from routerlab.measuring import microbench

    sizes = step.options.get("sizes", _default(microbench.batch_sizes, "sizes"))
    return _microbench(step, len(sizes) * step.options.get("repeats", _default(microbench.forwarding, "repeats")))


def _estimate_consolidation(step: Step, ceiling: bool) -> Estimate:
    from routerlab.measuring import microbench

    nfs = step.options.get("nfs", _default(microbench.consolidation, "kinds"))
    lengths = _default(microbench.consolidation, "lengths")
    repeats = step.options.get("repeats", _default(microbench.consolidation, "repeats"))
    return _microbench(step, len(nfs) * len(lengths) * 2 * repeats)  # each chain plain and consolidated


def _estimate_compare(step: Step, ceiling: bool) -> Estimate:
    from routerlab.engines import registry
    from routerlab.analysis import scenarios

    o = step.options
    # a cell an engine cannot do (its features) is grey and costs nothing; whether an engine
    # is built is known when the campaign runs, so every able engine is counted
    cells = sum(scenarios.load(s).features <= registry.classes()[e].features
                for s in o["scenarios"].values() for e in o["engines"])
    trials = cells * len(o["loads_frac"]) * o["runs"]
    return _on_testbed(step, trials, trials * o["duration"], cells, 0 if ceiling else 1)


def _estimate_reroute(step: Step, ceiling: bool) -> Estimate:
    from routerlab.measuring import fastreroute

    o = step.options
    # every variant named, or all of them: the run leaves out those this machine cannot run
    runs = len(o.get("variants", fastreroute.VARIANTS)) * o.get("runs", _default(fastreroute.experiment, "runs"))
    duration = o.get("duration", _default(fastreroute.run_once, "duration"))
    return Estimate(step, runs, runs * duration, runs * REROUTE_GAP_S, "runs")


_ESTIMATES = {"measure": _estimate_measure, "bench engines": _estimate_bench_engines,
              "bench search": _estimate_bench_search, "bench forwarding": _estimate_forwarding,
              "bench batch": _estimate_batch, "bench consolidation": _estimate_consolidation,
              "compare": _estimate_compare, "reroute": _estimate_reroute}


def estimate(c: Campaign) -> list[Estimate]:
    """How long each step takes (in the order they run; the ceiling's measurement first
    when the file asks for it): see :class:`Estimate` and :data:`TRIAL_GAP_S`."""
    out = [Estimate(None, 0, 0.0, CEILING_S)] if c.ceiling else []
    return out + [_ESTIMATES[s.name](s, c.ceiling and s.takes_ceiling) for s in c.steps]


# -- running one ------------------------------------------------------------------------

@dataclass
class Progress:
    """``DIR/campaign-progress.yaml``: which campaign runs into the folder (its label), the
    generator ceiling it measured (pps), and the steps finished (number, command, seconds
    it took, when it finished). Written after the ceiling and after each step."""

    folder: Path
    campaign: str
    ceiling_pps: float | None = None
    finished: list = field(default_factory=list)
    #: The generator that measured ``ceiling_pps`` ("xdp", "rlgen"; "" in older folders).
    generator: str = ""

    #: The labels of the earlier versions of the campaign this folder's run began with,
    #: when the file has since gained steps (:func:`grown`), the oldest first.
    grown_from: list = field(default_factory=list)
    #: The folder's copy of the file is such an earlier version: the run replaces it.
    outgrown: bool = field(default=False, repr=False)

    @classmethod
    def read(cls, folder: Path, c: Campaign) -> Progress:
        """The folder's progress for ``c`` (empty if none). A folder of another campaign
        is refused, so that every record in it names the file beside it, or an earlier
        version of it that ``c`` only adds steps to (:func:`grown`): then ``outgrown`` is
        set, the steps the earlier run finished are kept (where its progress file says
        so), and the run replaces the folder's copy with ``c``."""
        folder = Path(folder)
        copy = folder / FILE_NAME
        path = folder / PROGRESS_FILE
        data = yamlfile.load(path, "the campaign's progress file") if path.is_file() else None
        data = data if isinstance(data, dict) else {}
        outgrown = False
        if copy.is_file():
            raw = copy.read_bytes()
            sha = hashlib.sha256(raw).hexdigest()
            theirs = f"{FILE_NAME} sha256:{sha}"
            if sha != c.sha256:
                if not grown(raw, c):
                    raise ParameterError("out", f"{folder} holds another campaign ({FILE_NAME} sha256:{sha[:12]}..., "
                                                f"{c.path} is sha256:{c.sha256[:12]}...): give another --out, or "
                                                f"remove {folder} to start again")
                outgrown = True
                earlier = list(data.get("grown_from") or [])
                if data.get("campaign") == theirs:
                    data = {**data, "campaign": c.label}
                elif data.get("campaign") != c.label:
                    data = {}  # nothing recorded finished under either version
                data["grown_from"] = earlier + [theirs] if theirs not in earlier else earlier
        data = data if data.get("campaign") in (c.label, None) else {}
        return cls(folder, c.label, data.get("ceiling_pps"), list(data.get("finished") or []), data.get("generator") or "",
                   list(data.get("grown_from") or []), outgrown)

    def done(self, step: Step) -> bool:
        return any(f.get("step") == step.number for f in self.finished)

    def finish(self, step: Step, command: str, seconds: float):
        self.finished.append({"step": step.number, "command": command, "seconds": round(seconds, 1),
                              "finished_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
        self.write()

    def write(self):
        # whole or not at all: an interruption while writing leaves the last one
        target = self.folder / PROGRESS_FILE
        tmp = target.with_suffix(".yaml.tmp")
        tmp.write_text("# routerlab campaign run: what is finished here; a rerun skips it\n" + yaml.safe_dump(
            {"campaign": self.campaign, "ceiling_pps": self.ceiling_pps, "generator": self.generator,
             "finished": self.finished, **({"grown_from": self.grown_from} if self.grown_from else {})},
            sort_keys=False))
        os.replace(tmp, target)


def grown(earlier: bytes, c: Campaign) -> bool:
    """Whether the campaign ``c`` is the campaign file whose bytes are ``earlier`` with
    steps added at its end: the same ceiling and the same steps, in order, before them
    (its description may say more). A run of the earlier file then resumes as a run of
    ``c``: its finished steps are ``c``'s steps of the same numbers."""
    try:
        old = yaml.safe_load(earlier)
        new = yaml.safe_load(c.text)
    except yaml.YAMLError:
        return False
    if not (isinstance(old, dict) and isinstance(new, dict)):
        return False
    steps, more = old.get("steps") or [], new.get("steps") or []
    return (old.get("ceiling") == new.get("ceiling") and len(more) > len(steps)
            and more[:len(steps)] == steps)


def check(c: Campaign, steps, settings=None) -> None:
    """Every step's engine and scenario on the testbed of ``settings`` (None: the
    environment's), before anything runs: the binary
    is there and the engine can do the scenario (:func:`routerlab.measuring.measurement.resolve`; a
    comparison's missing engine is a grey cell instead). Raises the error, naming the
    campaign file and the step."""
    from routerlab.engines import registry
    from routerlab.measuring import measurement, search

    for s in steps:
        o = s.options
        try:
            if s.name == "measure":
                measurement.resolve(o["engine"], s.scenario(), s.path("config"), s.router(), o.get("control"),
                                  settings=settings, **{k: o[k] for k in ("rules", "routes", "frame_size") if k in o})
            elif s.name == "bench search":
                measurement.resolve(o["engine"], s.scenario(), settings=settings)
                search.require_mlrsearch()  # bench search sets ours against MLRsearch
            elif s.name == "bench engines":
                for name in o.get("engines", ()):
                    registry.get(name).check()
        except RouterlabError as e:
            raise RouterlabError(f"{c.path}: step {s.number} ({s.name}): {e}") from e


def run(c: Campaign, out, *, announce: Callable[[str], None] | None = None,
        report: Callable[[str], None] | None = None, settings=None,
        progress: routerlab.progress.Progress = routerlab.progress.silent) -> Path:
    """Run the campaign ``c`` into the dataset folder ``out`` (see the module's docstring),
    resuming what an earlier run of it finished, on the testbed of ``settings``
    (:class:`routerlab.testbed.settings.Settings`; None: the environment's). ``announce``
    gets the progress lines (one per step: step i of n, elapsed, the command it equals),
    ``report`` what each step's command would print, ``progress`` the trials of its sweeps
    (:func:`routerlab.measuring.sweep.run`). Needs root unless every step is a
    microbenchmark."""
    from routerlab.testbed.capabilities import require_root
    from routerlab.testbed.settings import Settings

    announce = announce or (lambda msg: None)
    report = report or (lambda msg: None)
    out = Path(out)
    state = Progress.read(out, c)
    todo = [s for s in c.steps if not state.done(s)]
    if not todo:
        announce(f"every step of {c.path} is finished in {out}")
        return out
    settings = settings or Settings()
    check(c, todo, settings)
    if any(s.needs_root for s in todo):
        require_root(settings)
    out.mkdir(parents=True, exist_ok=True)
    if state.outgrown:
        announce(f"{c.path} adds steps to the campaign run in {out} ({state.grown_from[-1]}): "
                 f"its {len(state.finished)} finished step(s) are kept")
        # the progress first: a run stopped between the two writes still finds its steps
        state.write()
    if not (out / FILE_NAME).is_file() or state.outgrown:
        tmp = out / (FILE_NAME + ".tmp")
        tmp.write_bytes(c.text)
        os.replace(tmp, out / FILE_NAME)
    start = time.monotonic()
    from routerlab.testbed.capabilities import runnable

    generator = runnable(settings.generator)
    if state.generator and state.generator != generator and state.finished:
        raise ParameterError("generator", f"{out} was measured with the {state.generator} generator; resuming it "
                                          f"with {generator} would mix them: give --generator {state.generator}, "
                                          "or another --out")
    with datasets.running_campaign(c.label):
        ceiling = state.ceiling_pps if state.generator in ("", generator) else None
        if c.ceiling and ceiling is not None:
            announce(f"resuming with the generator ceiling this campaign measured: {ceiling:.0f} pps")
        elif c.ceiling and any(s.takes_ceiling for s in todo):
            from routerlab.measuring import measurement

            ceiling = state.ceiling_pps = measurement.generator_ceiling(announce=announce, settings=settings)
            state.generator = generator
            state.write()
        shown = f"{ceiling:.0f}" if ceiling is not None else None
        for s in c.steps:
            head = f"step {s.number} of {len(c.steps)}"
            command = s.command(shown if c.ceiling else None)
            if state.done(s):
                announce(f"{head}: finished before, skipped: {command}")
                continue
            announce(f"{head} ({clock(time.monotonic() - start)} in): {command}")
            began = time.monotonic()
            text = RUNNERS[s.name](s, out, ceiling if c.ceiling and s.takes_ceiling else None, announce, settings, progress)
            state.finish(s, command, time.monotonic() - began)
            if text:
                report(text)
    announce(f"campaign finished: {len(c.steps)} steps in {out} ({clock(time.monotonic() - start)} this run)")
    return out


def searches_only(c: Campaign, repeats: int) -> Campaign:
    """The search steps of the campaign ``c`` (``measure`` steps that search, and ``bench
    engines``), each set to ``repeats`` repeats, as a campaign of their own (``bench repeat
    --campaign``): its text, which a run copies beside the data, is those steps as YAML with
    a first line naming ``c``; paths in its steps still resolve against ``c``'s folder.

    Raises
    ------
    ParameterError
        When ``c`` has no search step.
    """
    import dataclasses

    keep = [s for s in c.steps if (s.name == "measure" and "search" in s.options) or s.name == "bench engines"]
    if not keep:
        raise ParameterError("campaign", f"{c.path} has no search step (a measure step with search, or bench "
                                         "engines)")
    raw = yaml.safe_load(c.text)["steps"]
    steps, kept = [], []
    for i, s in enumerate(keep, 1):
        entry = dict(raw[s.number - 1])
        (key, options), = entry.items()
        entry = {key: {**options, "repeats": repeats}}
        kept.append(entry)
        steps.append(dataclasses.replace(s, number=i, options={**s.options, "repeats": repeats}))
    text = (f"# the search steps of {c.path}, each searched {repeats} times (routerlab bench repeat --campaign)\n"
            + yaml.safe_dump({"description": c.description, **({"ceiling": "measure"} if c.ceiling else {}),
                              "steps": kept}, sort_keys=False, allow_unicode=True)).encode()
    return dataclasses.replace(c, steps=tuple(steps), text=text, sha256=hashlib.sha256(text).hexdigest())


def clock(seconds: float) -> str:
    """Seconds as h:mm:ss."""
    s = int(round(seconds))
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


# -- the steps: each calls the library as its command does, and returns what it prints ----

def _given(step: Step, *keys: str, **renamed: str) -> dict:
    """The options of ``keys`` (and of ``renamed``'s values, under its keys) the file
    gives, lists as tuples: what a step passes on, leaving the rest to the defaults."""
    pairs = [(k, k) for k in keys] + list(renamed.items())
    return {param: tuple(v) if isinstance(v := step.options[k], list) else v
            for param, k in pairs if k in step.options}


def _run_measure(step: Step, out: Path, ceiling, announce, settings, progress) -> str | None:
    from routerlab.measuring import measurement, search

    o = step.options
    loads = {k: ",".join(map(str, o[k])) for k in ("loads", "loads_frac") if k in o}
    request = measurement.Request(o["engine"], step.scenario(), out, ceiling_pps=ceiling, config=step.path("config"),
                                  router=step.router(), settings=settings, **loads,
                                  **_given(step, "runs", "duration", "search", "pdr", "experiment", "rules", "routes",
                                           "frame_size", "steal_threshold", "max_repeats", "control", "repeats"))
    res = measurement.measure(request, announce=announce, progress=progress)
    return "\n".join(search.format_result(res) + search.format_repeated(res)) if "search" in o else None


def _run_bench_engines(step: Step, out: Path, ceiling, announce, settings, progress) -> str:
    from routerlab.benchmarks import engines

    return engines.report(*engines.run(out=out, settings=settings, announce=announce,
                                       **_given(step, "duration", "repeats", engine_names="engines")))


def _run_bench_search(step: Step, out: Path, ceiling, announce, settings, progress) -> str:
    from routerlab.benchmarks import search

    o = step.options
    return search.report(search.run(o["engine"], step.scenario(), out, kind=o["kind"], announce=announce,
                                    name=o["scenario"], settings=settings, **_given(step, "duration")))


def _run_forwarding(step: Step, out: Path, ceiling, announce, settings, progress) -> str:
    from routerlab.measuring import microbench
    from routerlab.benchmarks import forwarding

    names = tuple(step.options.get("engines", _default(forwarding.table, "engine_names")))
    ours, pub, raw = forwarding.table(names, forwarding.testbed_pdr(step.path("testbed_pdr")),
                                      **_given(step, "packets", "repeats"))
    microbench.save(raw, out, "forwarding", names)
    return forwarding.report(ours, pub)


def _run_batch(step: Step, out: Path, ceiling, announce, settings, progress) -> str:
    from routerlab.measuring import microbench
    from routerlab.benchmarks import forwarding

    engine = step.options.get("engine", _default(microbench.batch_sizes, "engine"))
    df = microbench.batch_sizes(engine, **_given(step, "sizes", "packets", "repeats"))
    microbench.save(df, out, "batch", [engine])
    return forwarding.batch_report(df)


def _run_consolidation(step: Step, out: Path, ceiling, announce, settings, progress) -> str:
    from routerlab.measuring import microbench
    from routerlab.benchmarks import consolidation

    engine = step.options.get("engine", _default(microbench.consolidation, "engine"))
    df = microbench.consolidation(engine=engine, **_given(step, "repeats", kinds="nfs"))
    microbench.save(df, out, "consolidation", [engine])
    return consolidation.report(df)


def _run_compare(step: Step, out: Path, ceiling, announce, settings, progress) -> str:
    from routerlab.analysis import comparison as tables
    from routerlab.measuring import comparison

    o = step.options
    comparison.campaign(out, tuple(o["engines"]), tuple(o["scenarios"].values()), fractions=o["loads_frac"],
                        runs=o["runs"], duration=o["duration"], ceiling_pps=ceiling, announce=announce,
                        settings=settings, progress=progress)
    return tables.orderings(tables.published(), tables.ours(out)).to_string(index=False)


def _run_reroute(step: Step, out: Path, ceiling, announce, settings, progress) -> str:
    from routerlab.measuring import fastreroute

    variants = fastreroute.variants_to_run(step.options.get("variants"), announce)
    samples, facts = fastreroute.experiment(variants, out=out,
                                            **_given(step, "runs", "duration", "fail_at", "converge_after"))
    fastreroute.record_environment(out, when=str(facts["started_at"].min()), settings=settings)
    from routerlab.analysis import reroute

    table, _ = reroute.summary(samples, facts, **_given(step, "fail_at"))
    return table.to_string(index=False, float_format=lambda x: f"{x:.3g}")


#: Step name -> what runs it: ``runner(step, out, ceiling_pps or None, announce, settings)``
#: (``settings``: the campaign's testbed settings), returning the text its command prints
#: (or None).
RUNNERS: dict[str, Callable] = {
    "measure": _run_measure, "bench engines": _run_bench_engines, "bench search": _run_bench_search,
    "bench forwarding": _run_forwarding, "bench batch": _run_batch, "bench consolidation": _run_consolidation,
    "compare": _run_compare, "reroute": _run_reroute,
}
