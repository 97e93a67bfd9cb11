"""Scenarios: the traffic and the router's task, as validated data.

Presets live in ``scenarios/presets.yaml``; a user's own YAML file with the same keys (one
mapping, or named mappings) works the same way. Every engine turns a :class:`Scenario`
into its own configuration and refuses features it does not support.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace
from importlib import resources
from pathlib import Path

from routerlab import yamlfile
from routerlab.errors import DataFormatError, ParameterError


@dataclass(frozen=True)
class Scenario:
    """What the generator sends and what the router must do.

    Attributes
    ----------
    name : str
        Preset or file name.
    flows : {"single", "multi"}
        ``single``: one destination, fixed ports; ``multi``: 254 destinations in one /24,
        random ports.
    frame_size : int
        Bytes on the wire, FCS included (64..1518).
    routes : int
        Route-table size (1 = only the route the traffic uses).
    rules : int
        Firewall rules the traffic traverses (0 = no firewall).
    drop_share : float
        Share of the traffic the firewall must drop (ratio in [0, 1)); loss is then
        counted only on the traffic that should pass.
    gre : bool
        GRE-encapsulate towards the far end.
    """

    name: str = "custom"
    flows: str = "single"
    frame_size: int = 64
    routes: int = 1
    rules: int = 0
    drop_share: float = 0.0
    gre: bool = False

    def __post_init__(self):
        checks = [
            ("flows", self.flows in ("single", "multi"), "must be 'single' or 'multi'"),
            ("frame_size", isinstance(self.frame_size, int) and 64 <= self.frame_size <= 1518,
             "must be an integer 64..1518 (bytes)"),
            ("routes", isinstance(self.routes, int) and 1 <= self.routes <= 2_000_000,
             "must be an integer 1..2000000"),
            ("rules", isinstance(self.rules, int) and 0 <= self.rules <= 64, "must be an integer 0..64"),
            ("drop_share", 0 <= self.drop_share < 1, "must be a ratio in [0, 1)"),
            ("gre", isinstance(self.gre, bool), "must be true or false"),
        ]
        for name, ok, msg in checks:
            if not ok:
                raise ParameterError(name, f"{msg}, got {getattr(self, name)!r} (scenario {self.name})")
        if self.drop_share and not self.rules:
            raise ParameterError("drop_share", f"needs a firewall (rules >= 1) (scenario {self.name})")

    @property
    def features(self) -> set[str]:
        """Features an engine must support to run this scenario."""
        f = set()
        if self.routes > 1:
            f.add("routes")
        if self.rules:
            f.add("firewall")
        if self.drop_share:
            f.add("drop")
        if self.gre:
            f.add("gre")
        return f

    def describe(self) -> str:
        """A one-line description with every parameter."""
        return ", ".join(f"{k}={v}" for k, v in asdict(self).items())


_KEYS = {f.name for f in fields(Scenario)} - {"name"}
#: A scenario in a file (:mod:`routerlab.yamlfile`): the keys of :class:`Scenario`, whose
#: ranges it checks itself.
SHAPE = yamlfile.Shape({"flows": str, "frame_size": int, "routes": int, "rules": int, "drop_share": float,
                        "gre": bool})
#: The presets file: named scenarios.
PRESETS = yamlfile.MapOf(SHAPE, each="scenario {key!r}")


def _from_mapping(name: str, m, source: str, line: int | None = None) -> Scenario:
    """The scenario ``name`` from the mapping ``m`` (on ``line`` of ``source``), checked."""
    yamlfile.check(m, SHAPE, source, f"scenario {name!r}", line=line)
    try:
        return Scenario(name=name, **m)
    except ParameterError as e:
        raise DataFormatError(source, yamlfile.line_of(m, e.name) or line, f"scenario {name!r}: {e}") from None


def presets() -> dict[str, Scenario]:
    """Named presets from ``scenarios/presets.yaml``."""
    text = resources.files("routerlab").joinpath("scenarios/presets.yaml").read_text()
    table = yamlfile.parse(text, "presets.yaml")
    yamlfile.check(table, PRESETS, "presets.yaml")
    return {k: _from_mapping(k, v, "presets.yaml", yamlfile.line_of(table, k)) for k, v in table.items()}


def load(name_or_path: str, **overrides) -> Scenario:
    """A preset by name, or a YAML file (one scenario mapping), with keyword overrides.

    Raises
    ------
    ParameterError
        Unknown preset, or an override out of range (named).
    DataFormatError
        A malformed scenario file (named, with the key).
    """
    p = Path(name_or_path)
    if p.suffix in (".yaml", ".yml") and p.is_file():
        data = yamlfile.load(p, "the scenario file")
        sc = _from_mapping(p.stem, data if data is not None else {}, str(p))
    else:
        table = presets()
        if name_or_path not in table:
            raise ParameterError("scenario", f"unknown scenario {name_or_path!r}; presets: {', '.join(table)}")
        sc = table[name_or_path]
    overrides = {k: v for k, v in overrides.items() if v is not None}
    unknown = set(overrides) - _KEYS
    if unknown:
        raise ParameterError("scenario", f"unknown override(s) {', '.join(sorted(unknown))}")
    changed = {k: v for k, v in overrides.items() if getattr(sc, k) != v}
    if not changed:
        return sc
    # the overrides are part of the name, so experiments with other knobs never share an id
    name = sc.name + "".join(f"_{k}{v}" for k, v in sorted(changed.items()))
    return replace(sc, name=name, **changed)
