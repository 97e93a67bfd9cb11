"""The campaign file: the steps that make a dataset, as data, checked when it is read.

A campaign is a YAML file, in the spirit of NPF's test files::

    description: >
      What the dataset is for, in one paragraph.
    ceiling: measure        # optional: measure the generator's ceiling once, at the start
    steps:
      - measure: {engine: bmv2, scenario: single-flow, loads: [1000, 2000], runs: 10, duration: 1}
      - bench: {benchmark: engines, engines: [linux, bmv2], duration: 1}
      - compare: {engines: [nft, ebpf], scenarios: {single_flow_50fw: single-flow-fw50},
                  loads_frac: [0.1, 0.5], runs: 5, duration: 2}
      - reroute: {runs: 10}

Each step is one routerlab command, its keys the command's options as the library
function the step calls names them (``loads_frac``, ``frame_size``); :data:`STEPS` lists
every kind, benchmark and key with its unit. A key left out takes the default of that
function. With ``ceiling: measure`` every ``measure`` and ``compare`` step is given the
ceiling measured at the start (as ``--ceiling``), so that all their loads are fractions
of one ceiling.

:func:`load` checks the whole file before anything runs: an unknown key, kind, benchmark,
engine or scenario, or a value out of range, is one :class:`~routerlab.errors.DataFormatError`
naming the file and line, the step, the key and the values allowed. Whether an engine is
built on this machine is not the file's business: :func:`routerlab.publish.campaign.run` checks
that before its first step.

A relative path (``config``, a scenario file, ``testbed_pdr``) that starts with one of the
project's folders (``routers/...``, ``datasets/...``) is the project's: the clone's, or the
copy bundled in a pip-installed routerlab (:func:`routerlab.version.project_dir`); any
other is relative to the campaign file's folder.
"""

from __future__ import annotations

import hashlib
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from routerlab import yamlfile
from routerlab.defaults import SEARCH_KINDS
from routerlab.errors import DataFormatError, ParameterError, ValueRefused

#: The name a campaign file is copied under into the dataset folder it made.
FILE_NAME = "campaign.yaml"


@dataclass(frozen=True)
class _Context:
    """What checking a step needs besides its values: where relative paths start, and the
    names the file may use (read once per file)."""

    base: Path
    engines: tuple[str, ...]
    presets: tuple[str, ...]


@dataclass(frozen=True)
class Key:
    """One key of a step: its check (value, context) -> value, raising
    :class:`~routerlab.errors.ValueRefused` with what it takes, and what it means, with unit."""

    check: Callable
    meaning: str
    required: bool = False


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _count(minimum: int) -> Callable:
    def check(v, ctx):
        if not (isinstance(v, int) and not isinstance(v, bool) and v >= minimum):
            raise ValueRefused(f"a whole number >= {minimum}")
        return v
    return check


def _seconds(v, ctx):
    if not (_number(v) and v > 0):
        raise ValueRefused("a number of seconds > 0")
    return v


def _a_number(v, ctx):
    # the range is measuring.check's, which the step's keys together go through
    if not _number(v):
        raise ValueRefused("a number")
    return v


def _flag(v, ctx):
    if not isinstance(v, bool):
        raise ValueRefused("true or false")
    return v


def _text(v, ctx):
    if not (isinstance(v, str) and v.strip()):
        raise ValueRefused("a non-empty text")
    return v


def _choice(*values) -> Callable:
    def check(v, ctx):
        if v not in values:
            raise ValueRefused(f"one of {', '.join(values)}")
        return v
    return check


def _names(allowed: Callable[[], tuple[str, ...]]) -> Callable:
    """A non-empty list of names, each one of ``allowed()`` (read when a file uses the key)."""
    def check(v, ctx):
        known = allowed()
        if not (isinstance(v, list) and v and all(x in known for x in v)):
            raise ValueRefused(f"a list of: {', '.join(known)}")
        return v
    return check


def _engine(v, ctx):
    if v not in ctx.engines:
        raise ValueRefused(f"one of {', '.join(ctx.engines)}")
    return v


def _engines(v, ctx):
    if not (isinstance(v, list) and v and all(x in ctx.engines for x in v)):
        raise ValueRefused(f"a list of engines: {', '.join(ctx.engines)}")
    return v


def _scenario(v, ctx):
    if v in ctx.presets or (isinstance(v, str) and v.endswith((".yaml", ".yml")) and resolve(v, ctx.base).is_file()):
        return v
    raise ValueRefused(f"a preset ({', '.join(ctx.presets)}) or a scenario YAML file")


def _scenario_map(v, ctx):
    if not (isinstance(v, dict) and v and all(isinstance(k, str) and p in ctx.presets for k, p in v.items())):
        raise ValueRefused(f"a mapping of published scenario names to presets ({', '.join(ctx.presets)})")
    return v


def _file(v, ctx):
    if not (isinstance(v, str) and resolve(v, ctx.base).is_file()):
        raise ValueRefused("an existing file (from the project's folders, or relative to the campaign file)")
    return v


def _loads(v, ctx):
    if not (isinstance(v, list) and v and all(_number(x) and x > 0 for x in v)):
        raise ValueRefused("a list of loads in pps, each > 0")
    return v


def _fractions(v, ctx):
    from routerlab.measuring.sweep import parse_loads

    if not (isinstance(v, list) and v and all(_number(x) for x in v)):
        raise ValueRefused("a list of fractions of the generator's ceiling")
    try:  # the sweep's own rule for fractions, so that the file and the command agree
        parse_loads(loads_frac=",".join(map(str, v)), ceiling_pps=1e6)
    except ParameterError as e:
        raise ValueRefused(str(e).removeprefix(f"{e.name}: ")) from None
    return v


def _sizes(v, ctx):
    if not (isinstance(v, list) and v and all(isinstance(x, int) and not isinstance(x, bool) and x > 0 for x in v)):
        raise ValueRefused("a list of whole numbers > 0")
    return v


def _nfs() -> tuple[str, ...]:
    from routerlab.measuring.microbench import NFS

    return NFS


def _variants() -> tuple[str, ...]:
    from routerlab.analysis.reroute import VARIANTS

    return VARIANTS


#: Every kind of step (``bench`` by benchmark) and its keys. ``measure``'s keys are the
#: parameters of :class:`routerlab.measuring.measurement.Request`.
STEPS: dict[str, dict[str, Key]] = {
    "measure": {
        "engine": Key(_engine, "the engine to measure", required=True),
        "scenario": Key(_scenario, "a scenario preset or YAML file", required=True),
        "loads": Key(_loads, "offered loads, pps"),
        "loads_frac": Key(_fractions, "offered loads, fractions of the generator's ceiling"),
        "runs": Key(_count(1), "trials per load (K)"),
        "duration": Key(_seconds, "seconds per trial (T); a search's final trials"),
        "search": Key(_choice(*SEARCH_KINDS), "search for PDR, NDR or both instead of sweeping loads"),
        "pdr": Key(_a_number, "PDR fraction of the search and the verdict, a ratio (0.005 is PDR@0.5%)"),
        "experiment": Key(_text, "experiment id (default ENGINE-SCENARIO)"),
        "config": Key(_file, "a router configuration of one's own (click, fastclick)"),
        "rules": Key(_count(0), "override: firewall rules"),
        "routes": Key(_count(1), "override: route-table size"),
        "frame_size": Key(_count(64), "override: frame size on the wire, bytes"),
        "steal_threshold": Key(_a_number, "CPU steal above which a trial is measured again, a ratio"),
        "max_repeats": Key(_count(0), "repeats of a disturbed trial at most"),
        "repeats": Key(_count(1), "a search's repeats, each on a fresh testbed (its answer: their median and range)"),
        # engine exec: a router of one's own (routerlab.engines.external.Commands)
        "start": Key(_text, "engine exec: the shell command that starts the router and stays in the foreground"),
        "ready": Key(_text, "engine exec: a shell command that exits 0 once the router forwards"),
        "stop": Key(_text, "engine exec: a shell command run before the router's processes are stopped"),
        "counters": Key(_text, "engine exec: a shell command printing the router's drop counters, 'name count' per line"),
        "version_command": Key(_text, "engine exec: a shell command printing the router's version"),
        "ready_timeout": Key(_seconds, "engine exec: seconds the router has to become ready"),
        "kernel_forwarding": Key(_flag, "engine exec: the router makes the kernel forward (true or false)"),
        "control": Key(_choice("p4runtime", "thrift"), "engine bmv2: its control plane"),
    },
    "bench engines": {
        "engines": Key(_engines, "engines searched in one run, the first the reference (nft runs 50 rules)"),
        "duration": Key(_seconds, "seconds per final search trial"),
        "repeats": Key(_count(1), "searches of each engine, each on a fresh testbed (its answer: their median and range)"),
    },
    "bench search": {
        "engine": Key(_engine, "the engine to search", required=True),
        "scenario": Key(_scenario, "a scenario preset or YAML file", required=True),
        "kind": Key(_choice(*SEARCH_KINDS), "what to search for", required=True),
        "duration": Key(_seconds, "seconds per final search trial"),
    },
    "bench forwarding": {
        "engines": Key(_names(lambda: ("click", "fastclick")), "Click flavours run from memory"),
        "packets": Key(_count(1), "packets per timed run"),
        "repeats": Key(_count(1), "timed runs per engine"),
        "testbed_pdr": Key(_file, "a search_results.csv whose PDR rows join the table"),
    },
    "bench batch": {
        "engine": Key(_choice("click", "fastclick"), "the Click flavour"),
        "sizes": Key(_sizes, "batch sizes, packets"),
        "packets": Key(_count(1), "packets per timed run"),
        "repeats": Key(_count(1), "timed runs per size"),
    },
    "bench consolidation": {
        "nfs": Key(_names(_nfs), "network functions to chain"),
        "repeats": Key(_count(1), "timed runs per configuration"),
        "engine": Key(_choice("click", "fastclick"), "the Click flavour"),
    },
    "compare": {
        "engines": Key(_engines, "engines, rows of the tables (those not built become grey cells)", required=True),
        "scenarios": Key(_scenario_map, "published scenario name -> our preset, one table each", required=True),
        "loads_frac": Key(_fractions, "offered loads, fractions of the generator's ceiling", required=True),
        "runs": Key(_count(1), "trials per cell and load (K)", required=True),
        "duration": Key(_seconds, "seconds per trial (T)", required=True),
    },
    "reroute": {
        "variants": Key(_names(_variants), "variants (default: every one this machine can run)"),
        "runs": Key(_count(1), "runs per variant"),
        "duration": Key(_seconds, "seconds per run"),
        "fail_at": Key(_seconds, "seconds into a run when the link fails"),
        "converge_after": Key(_seconds, "seconds from the failure to the control plane's update"),
    },
}
#: The kinds of step a file may name; a ``bench`` step names its benchmark.
KINDS = ("measure", "bench", "compare", "reroute")
BENCHMARKS = tuple(k.split()[1] for k in STEPS if k.startswith("bench "))


def _description(v):
    if not (isinstance(v, str) and v.strip()):
        raise ValueRefused("one paragraph saying what the dataset is for")


def _ceiling(v):
    if v != "measure":
        raise ValueRefused("measure (or leave it out)")


#: A campaign file's shape (:mod:`routerlab.yamlfile`); each step is checked by its kind's keys.
SHAPE = yamlfile.Shape({"description": _description, "ceiling": _ceiling,
                        "steps": yamlfile.ListOf(object, min=1, what=f"a list of steps, each one of: {', '.join(KINDS)}")},
                       required=("description", "steps"))
#: The top-level keys of a campaign file.
TOP_KEYS = tuple(SHAPE.keys)
#: The steps that take the campaign's ceiling (``ceiling: measure``).
TAKE_CEILING = ("measure", "compare")
#: Steps that run without root: the microbenchmarks run Click from memory.
WITHOUT_ROOT = ("bench forwarding", "bench batch", "bench consolidation")

# options written on a command line as a repeated option of another name, or joined by commas
_FLAGS = {"engines": "--engine", "nfs": "--nf", "variants": "--variant", "scenarios": "--scenario"}
_JOINED = ("loads", "loads_frac", "sizes")


def resolve(path: str, base: Path) -> Path:
    """A path of a campaign file: absolute as it is; starting with a project folder
    (``routers/``, ``datasets/``, ...), that folder's (the clone's or the bundled one);
    else relative to ``base``, the campaign file's folder."""
    from routerlab.analysis.datasets import BUNDLED
    from routerlab.version import project_dir

    p = Path(path)
    if p.is_absolute():
        return p
    if len(p.parts) > 1 and p.parts[0] in BUNDLED:
        return project_dir(p.parts[0]).joinpath(*p.parts[1:])
    return base / p


def _plain(v) -> str:
    """A number as a command line writes it (1.0 as 1, 0.05 as 0.05)."""
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


@dataclass(frozen=True)
class Step:
    """One step of a campaign: ``name`` is its kind (``measure``, ``compare``, ``reroute``)
    or ``bench`` and its benchmark (``bench engines``); ``options`` the keys the file gives
    (checked, as written; a bench step's without ``benchmark``); ``number`` counts from 1."""

    number: int
    name: str
    options: dict
    base: Path
    line: int | None = None

    @property
    def takes_ceiling(self) -> bool:
        return self.name in TAKE_CEILING

    @property
    def needs_root(self) -> bool:
        return self.name not in WITHOUT_ROOT

    def path(self, key: str) -> Path | None:
        """The file a path-valued option names (:func:`resolve`), or None if not given."""
        return resolve(self.options[key], self.base) if key in self.options else None

    def router(self):
        """The exec engine's commands the step gives
        (:class:`routerlab.engines.external.Commands`), or None if it gives none."""
        from routerlab.engines.external import Commands

        given = {k: self.options[k] for k in Commands.keys() if k in self.options}
        # a step with other commands and no start is refused by Commands, naming start
        return Commands(**{"start": None, **given}) if given else None

    def scenario(self) -> str:
        """The step's scenario as :func:`routerlab.analysis.scenarios.load` takes it: a preset's
        name, or a scenario file's path (:func:`resolve`)."""
        name = self.options["scenario"]
        return str(self.path("scenario")) if name.endswith((".yaml", ".yml")) else name

    def command(self, ceiling: str | None = None) -> str:
        """The routerlab command line this step equals (``--out`` left out), with
        ``--ceiling`` when the campaign gives it one."""
        parts = ["routerlab", *self.name.split()]
        for k, v in self.options.items():
            flag = _FLAGS.get(k, "--" + k.replace("_", "-"))
            if k in _JOINED:
                parts += [flag, ",".join(map(_plain, v))]
            elif isinstance(v, (list, dict)):
                for x in (v.values() if isinstance(v, dict) else v):
                    parts += [flag, _plain(x)]
            elif isinstance(v, bool):
                parts.append(flag if v else "--no-" + flag[2:])
            else:
                parts += [flag, shlex.quote(_plain(v))]
        if ceiling is not None and self.takes_ceiling:
            parts += ["--ceiling", ceiling]
        return " ".join(parts)


@dataclass(frozen=True)
class Campaign:
    """A campaign file, checked: its ``description``, whether it measures the generator's
    ``ceiling`` once at the start, its ``steps``, and the SHA-256 of its bytes."""

    path: Path
    description: str
    ceiling: bool
    steps: tuple[Step, ...]
    sha256: str
    text: bytes

    @property
    def label(self) -> str:
        """How an environment record names it (its ``campaign`` column)."""
        return f"{FILE_NAME} sha256:{self.sha256}"


def load(path) -> Campaign:
    """Read and check a campaign file (see the module's docstring); nothing runs. A
    dataset folder stands for the campaign file in it (``DIR/campaign.yaml``).

    Raises
    ------
    DataFormatError
        The file is missing, not YAML, or has an unknown key, kind, engine or scenario or a
        value out of range: one line naming the file, the line and step, the key and
        what is allowed.
    """
    path = Path(path)
    if path.is_dir():
        path = path / "campaign.yaml"
    raw = yamlfile.read(path, "the campaign file")
    data = yamlfile.parse(raw, path)
    yamlfile.check(data, SHAPE, path)
    ctx = _context(path.parent)
    steps = tuple(_step(i + 1, item, ctx, path, yamlfile.line_of(data["steps"], i))
                  for i, item in enumerate(data["steps"]))
    return Campaign(path, " ".join(data["description"].split()), "ceiling" in data, steps,
                    hashlib.sha256(raw).hexdigest(), raw)


def _context(base: Path) -> _Context:
    # the registry's names, as `measure` checks them (engines.get); loading the registry
    # starts no engine and looks for no binary: whether one is built is checked at run time
    from routerlab.engines import registry
    from routerlab.analysis import scenarios

    return _Context(base, tuple(registry.names()), tuple(scenarios.presets()))


def _step(number: int, item, ctx: _Context, path: Path, line: int | None) -> Step:
    """Check one item of ``steps`` of the file ``path`` (on ``line``)."""
    def refuse(message: str):
        raise DataFormatError(path, line, message)

    if not (isinstance(item, dict) and len(item) == 1):
        refuse(f"step {number}: expected one key, the kind of step, one of: {', '.join(KINDS)}")
    kind, options = next(iter(item.items()))
    if kind not in KINDS:
        refuse(f"step {number}: unknown step kind {kind!r}; allowed: {', '.join(KINDS)}")
    options = {} if options is None else options
    if not isinstance(options, dict):
        refuse(f"step {number} ({kind}): expected its options as a mapping (key: value)")
    name = kind
    if kind == "bench":
        benchmark = options.get("benchmark")
        if benchmark not in BENCHMARKS:
            refuse(f"step {number} (bench): benchmark {benchmark!r} is not allowed; allowed: {', '.join(BENCHMARKS)}")
        name = f"bench {benchmark}"
    where = f"step {number} ({name})"
    yamlfile.check(options, _shape(name, ctx), path, where, line=line)
    options = {k: v for k, v in options.items() if k != "benchmark"}
    if name == "measure":
        _check_measure(options, ctx, lambda m: refuse(f"{where}: {m}"))
    return Step(number, name, options, ctx.base, line)


def _check_measure(o: dict, ctx: _Context, refuse):
    """What a measure step's keys must be together: a sweep's loads or a search, and the
    scenario with its overrides (checked by :func:`routerlab.analysis.scenarios.load`)."""
    from routerlab.analysis import scenarios

    given = [k for k in ("loads", "loads_frac") if k in o]
    for k in given + ["runs"]:
        if "search" in o and k in o:
            refuse(f"{k}: a search chooses its own loads and trials; allowed: either search or {k}")
    if "search" not in o and len(given) != 1:
        refuse("loads: a sweep needs exactly one of loads (pps) and loads_frac (fractions); "
               "allowed: loads, loads_frac, or search")
    from routerlab.measuring import measurement

    try:
        measurement.check(**{k: (",".join(map(str, o[k])) if k in ("loads", "loads_frac") else o[k])
                           for k in ("loads", "loads_frac", "runs", "duration", "search", "pdr", "steal_threshold",
                                     "max_repeats", "repeats") if k in o})
    except ParameterError as e:
        refuse(f"{e.name.lstrip('-').replace('-', '_')}: {str(e).removeprefix(f'{e.name}: ')}")
    overrides = {k: o[k] for k in ("rules", "routes", "frame_size") if k in o}
    scenario = o["scenario"]
    try:
        scenarios.load(str(resolve(scenario, ctx.base)) if scenario not in ctx.presets else scenario, **overrides)
    except (ParameterError, DataFormatError) as e:
        key = e.name if isinstance(e, ParameterError) and e.name in overrides else "scenario"
        refuse(f"{key}: {e}")


def _shape(name: str, ctx: _Context) -> yamlfile.Shape:
    """The keys of a step of kind ``name`` (a bench step's with its ``benchmark``), each
    value checked by its :class:`Key` with ``ctx``."""
    keys = STEPS[name]
    checks = {k: (lambda v, c=key.check: c(v, ctx)) for k, key in keys.items()}
    if name.startswith("bench "):
        checks = {"benchmark": object, **checks}  # checked by _step, which chose the keys by it
    return yamlfile.Shape(checks, required=tuple(k for k, key in keys.items() if key.required))
