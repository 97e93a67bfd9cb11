"""P4 programs for bmv2: compiling them with p4c, and their table entries as data.

The programs live in ``p4/<name>/solution/<name>.p4`` (the course skeletons next to them,
``p4/<name>/<name>.p4``) and share ``p4/include``. Compiler output goes to the user cache,
never into the checkout.

Table entries are data in the p4lang tutorials' runtime-JSON form, keyed by the fully
qualified names of the compiled program::

    {"table": "RlIngress.ipv4_lpm", "match": {"hdr.ipv4.dstAddr": ["10.71.0.0", 24]},
     "action_name": "RlIngress.forward", "action_params": {"src": "02:..", "dst": "02:..", "port": 1}}

Matches: exact ``v``, lpm ``[v, prefix_len]``, ternary ``[v, mask]``, range ``[lo, hi]``;
a ternary or range field left out matches anything. Entries of tables with ternary or
range fields carry a ``priority``: as in P4Runtime, the largest number wins. An entry with
``"default_action": true`` sets the table's default. They come from a file (the
exercises' ``entries.json``, or a tutorials ``sN-runtime.json`` with its ``target``,
``p4info`` and ``bmv2_json``) or from a scenario (:func:`scenario_entries`).
:func:`parse_entries` checks every name and value against the program's P4Info before
anything is written; :func:`cli_commands` turns them into simple_switch_CLI commands and
:mod:`routerlab.engines.p4runtime` into P4Runtime updates.
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from routerlab import cache
from routerlab.version import project_dir
from routerlab.errors import DataFormatError, EngineNotFound, NotStarted, RouterlabError
from routerlab.engines.base import find_binary
from routerlab.testbed.interface import FILL_NET
from routerlab.engines.rules import firewall

PROGRAMS = ("router", "firewall", "gre", "shortcut")


def p4_dir() -> Path:
    """``p4/`` of the clone or the installed package (``$ROUTERLAB_P4_DIR`` overrides)."""
    d = Path(os.environ.get("ROUTERLAB_P4_DIR") or project_dir("p4"))
    if not (d / "include" / "common.p4").is_file():
        raise EngineNotFound(f"p4: programs not found in {d} (set ROUTERLAB_P4_DIR)")
    return d


def source(program: str | Path, solution: bool = True) -> Path:
    """The file of a program by name (its solution, or the course skeleton), or a path."""
    p = Path(program)
    if p.suffix == ".p4":
        if not p.is_file():
            raise RouterlabError(f"{p}: no such P4 file")
        return p
    if program not in PROGRAMS:
        raise RouterlabError(f"unknown P4 program {program!r}; known: {', '.join(PROGRAMS)}")
    d = p4_dir() / str(program)
    path = d / "solution" / f"{program}.p4" if solution else d / f"{program}.p4"
    if not path.is_file():
        raise RouterlabError(f"{path}: no such P4 file"
                             + (" (a copy handed out without the solutions)" if solution else ""))
    return path


def p4c() -> str:
    return find_binary("p4c", "p4c-bm2-ss")


def cache_dir() -> Path:
    return cache.folder("p4")


def p4info_of(json_path: Path) -> Path:
    """The P4Info (text format) :func:`compile_program` wrote beside the bmv2 JSON."""
    return Path(json_path).with_suffix(".p4info.txtpb")


def compile_program(program: str | Path, solution: bool = True) -> Path:
    """Compile with ``p4c-bm2-ss`` into the cache; return the bmv2 JSON. Its P4Info is
    beside it (:func:`p4info_of`).

    Cached by the hash of the program, the shared includes and the compiler's path, so an
    edited program is recompiled and an unchanged one is not. Compiler errors are raised
    as they are (p4c names the file and line), as :class:`~routerlab.errors.NotStarted`:
    the program is the cause.
    """
    import subprocess

    src = source(program, solution)
    inc = p4_dir() / "include"
    h = hashlib.sha256(src.read_bytes())
    for f in sorted(inc.glob("*.p4")):
        h.update(f.read_bytes())
    compiler = p4c()
    h.update(compiler.encode())
    out = cache_dir() / f"{src.stem}-{h.hexdigest()[:12]}.json"
    if out.is_file() and p4info_of(out).is_file():
        return out
    tmp = out.with_suffix(".tmp.json")
    tmp_info = p4info_of(tmp)
    p = subprocess.run([compiler, "--std", "p4-16", "--target", "bmv2", "--arch", "v1model", "-I", str(inc),
                        "--p4runtime-files", str(tmp_info), "-o", str(tmp), str(src)], capture_output=True, text=True)
    if p.returncode != 0:
        tmp.unlink(missing_ok=True)
        tmp_info.unlink(missing_ok=True)
        said = (p.stderr or p.stdout).strip()
        # p4c's first "file(line): ..." first, so that a one-line summary names file and line
        first = next((ln for ln in said.splitlines() if re.match(r".+\(\d+\):", ln)), "")
        raise NotStarted(f"p4c-bm2-ss failed: {first or src}\n{said}")
    os.replace(tmp_info, p4info_of(out))  # the P4Info first: the JSON's presence means both are there
    os.replace(tmp, out)
    return out


@dataclass(frozen=True)
class Field:
    name: str
    match_type: str  # exact, lpm, ternary, range or optional
    bitwidth: int


@dataclass(frozen=True)
class Table:
    name: str
    keys: tuple[Field, ...]
    actions: tuple[str, ...]
    #: Actions only an entry may run, and those only the default may (P4Info's scope).
    table_only: frozenset[str] = frozenset()
    default_only: frozenset[str] = frozenset()
    #: Its default action is fixed by the program (``const default_action``).
    const_default: bool = False

    @property
    def prioritised(self) -> bool:
        return any(k.match_type in ("ternary", "range", "optional") for k in self.keys)


class Pipeline:
    """Tables, actions (with parameter names and widths), counters and registers of a
    compiled program, as its P4Info (text format, the file ``p4c --p4runtime-files``
    writes) names them. Given the bmv2 JSON of :func:`compile_program`, it reads the P4Info
    beside it."""

    def __init__(self, path: str | Path):
        from google.protobuf import text_format
        from finsy.proto import p4i

        path = Path(path)
        if path.suffix == ".json":
            path = p4info_of(path)
        info = p4i.P4Info()
        try:
            text_format.Parse(path.read_text(), info)
        except OSError as e:
            raise RouterlabError(f"{path}: {e.strerror}") from None
        except text_format.ParseError as e:
            raise DataFormatError(path, None, f"not a P4Info in text format: {e}") from None
        self.path = path
        self.info = info
        names = {a.preamble.id: a.preamble.name for a in info.actions}
        #: action name -> [(parameter, bits)]
        self.actions = {a.preamble.name: [(p.name, p.bitwidth) for p in a.params] for a in info.actions}
        self.tables: dict[str, Table] = {}
        for t in info.tables:
            keys = tuple(Field(m.name, p4i.MatchField.MatchType.Name(m.match_type).lower(), m.bitwidth)
                         for m in t.match_fields)
            scoped = {scope: frozenset(names[a.id] for a in t.action_refs if a.scope == scope)
                      for scope in (p4i.ActionRef.TABLE_ONLY, p4i.ActionRef.DEFAULT_ONLY)}
            self.tables[t.preamble.name] = Table(t.preamble.name, keys, tuple(names[a.id] for a in t.action_refs),
                                                 scoped[p4i.ActionRef.TABLE_ONLY],
                                                 scoped[p4i.ActionRef.DEFAULT_ONLY], bool(t.const_default_action_id))
        #: counter array name -> number of cells
        self.counters = {c.preamble.name: c.size for c in info.counters}
        self.registers = [r.preamble.name for r in info.registers]


def _int(v, bits: int) -> int:
    """A match or parameter value as an integer: int, IPv4 dotted quad or MAC."""
    if isinstance(v, bool):
        raise ValueError(f"not a number: {v!r}")
    if isinstance(v, int):
        n = v
    elif isinstance(v, str) and v.count(".") == 3:
        n = int(ipaddress.IPv4Address(v))
    elif isinstance(v, str) and v.count(":") == 5:
        n = int(v.replace(":", ""), 16)
    elif isinstance(v, str):
        n = int(v, 0)
    else:
        raise ValueError(f"not a value: {v!r}")
    if not 0 <= n < (1 << bits):
        raise ValueError(f"{v!r} does not fit in {bits} bits")
    return n


#: bmv2's runtime CLI gives an entry of a ternary or range table a priority where the
#: smallest number wins; P4Runtime (and the entries files) one where the largest wins.
#: bmv2's own P4Runtime server turns one into the other around this pivot (INT_MAX, its
#: ``BM_MAX_PRIORITY``: PI/src/pi_tables_imp.cpp), and so does :func:`cli_command`.
CLI_PRIORITY_PIVOT = 2**31 - 1


@dataclass(frozen=True)
class Match:
    """One field of an entry's key, as integers: exact ``(v,)``, lpm ``(v, prefix_len)``,
    ternary ``(v, mask)``, range ``(lo, hi)``, optional ``(v, all ones)`` or, left out,
    ``(0, 0)``."""

    field: Field
    values: tuple[int, ...]

    @property
    def wildcard(self) -> bool:
        """Matches anything (P4Runtime leaves such a field out of the entry)."""
        kind, v, top = self.field.match_type, self.values, (1 << self.field.bitwidth) - 1
        return (kind in ("ternary", "optional") and v[1] == 0) or (kind == "range" and v == (0, top)) \
            or (kind == "lpm" and v[1] == 0)


@dataclass(frozen=True)
class Entry:
    """A table entry checked against the program (:func:`parse_entries`): names as the
    P4Info gives them, values as integers. ``key`` holds every field of the table, in the
    table's order (absent ternary and range fields as wildcards)."""

    table: str
    action: str
    params: tuple[tuple[str, int, int], ...]  # (name, value, bits), in the action's order
    key: tuple[Match, ...] = ()
    priority: int | None = None
    default: bool = False
    #: Its place in the list it came from (``table_entries[index]``), for errors.
    index: int = field(default=-1, compare=False)


def parse_entries(entries: list[dict], pipe: Pipeline, source: str = "entries",
                  refused: list[str] | None = None) -> list[Entry]:
    """Runtime-JSON ``entries`` checked against ``pipe``, every one before any is used.

    ``refused``: a list to which an entry that does not fit the program is added (why,
    naming it) and left out, instead of raising: a course skeleton, whose tables are not
    all written yet, still starts with the entries that fit.

    Raises
    ------
    DataFormatError
        An unknown table, action, field or parameter, a missing priority or a value that
        does not fit, naming the entry (``table_entries[i]`` of ``source``).
    """
    out = []
    for i, e in enumerate(entries):
        try:
            out.append(_entry(i, e, pipe, source))
        except DataFormatError as err:
            if refused is None:
                raise
            refused.append(str(err))
    return out


def _entry(i: int, e: dict, pipe: Pipeline, source: str) -> Entry:
    """Entry ``e``, the ``i``-th of ``source`` (see :func:`parse_entries`)."""
    where = f"table_entries[{i}]"

    def bad(msg):
        return DataFormatError(source, None, f"{where}: {msg}")
    if not isinstance(e, dict):
        raise bad(f"expected an object, got {e!r}")
    t = pipe.tables.get(e.get("table"))
    if t is None:
        raise bad(f"unknown table {e.get('table')!r}; the program has {', '.join(pipe.tables) or 'no tables'} "
                  "(p4c leaves out a table that nothing applies)")
    action = e.get("action_name")
    if action not in t.actions:
        raise bad(f"table {t.name} has no action {action!r} (it has {', '.join(t.actions)})")
    params = e.get("action_params") or {}
    want = pipe.actions[action]
    if set(params) != {n for n, _ in want}:
        raise bad(f"action {action} takes parameters {[n for n, _ in want]}, got {sorted(params)}")
    try:
        args = tuple((n, _int(params[n], w), w) for n, w in want)
    except ValueError as err:
        raise bad(f"action {action}: {err}") from None
    if e.get("default_action"):
        if t.const_default:
            raise bad(f"table {t.name}'s default action is fixed by the program (const default_action)")
        if action in t.table_only:
            raise bad(f"action {action} may not be table {t.name}'s default (@tableonly)")
        return Entry(t.name, action, args, default=True, index=i)
    if action in t.default_only:
        raise bad(f"action {action} may only be table {t.name}'s default (@defaultonly)")
    match = dict(e.get("match") or {})
    unknown = set(match) - {k.name for k in t.keys}
    if unknown:
        raise bad(f"table {t.name} has no field {', '.join(sorted(unknown))} "
                  f"(it matches {', '.join(k.name for k in t.keys) or 'nothing'})")
    key = []
    try:
        for k in t.keys:
            v = match.get(k.name)
            top = (1 << k.bitwidth) - 1
            if k.match_type == "exact":
                if v is None:
                    raise ValueError(f"exact field {k.name} is missing")
                key.append(Match(k, (_int(v, k.bitwidth),)))
            elif k.match_type == "optional":
                key.append(Match(k, (_int(v, k.bitwidth), top) if v is not None else (0, 0)))
            elif k.match_type == "lpm":
                if v is None:
                    raise ValueError(f"lpm field {k.name} is missing")
                value, length = _pair(v, k.name)
                length = int(length)
                if not 0 <= length <= k.bitwidth:
                    raise ValueError(f"{k.name}: prefix length {length} is not in 0..{k.bitwidth}")
                key.append(Match(k, (_int(value, k.bitwidth) & (top ^ (top >> length)), length)))
            elif k.match_type == "ternary":
                val, mask = _pair(v, k.name) if v is not None else (0, 0)
                mask = _int(mask, k.bitwidth)
                key.append(Match(k, (_int(val, k.bitwidth) & mask, mask)))
            elif k.match_type == "range":
                lo, hi = _pair(v, k.name) if v is not None else (0, top)
                lo, hi = _int(lo, k.bitwidth), _int(hi, k.bitwidth)
                if lo > hi:
                    raise ValueError(f"{k.name}: range {lo}..{hi} is empty")
                key.append(Match(k, (lo, hi)))
            else:
                raise ValueError(f"match kind {k.match_type} is not supported here")
    except (ValueError, TypeError) as err:
        raise bad(str(err)) from None
    prio = None
    if t.prioritised:
        if "priority" not in e:
            raise bad(f"table {t.name} has ternary, range or optional fields: the entry needs a priority")
        prio = e["priority"]
        if isinstance(prio, bool) or not isinstance(prio, int) or not 0 < prio < CLI_PRIORITY_PIVOT:
            raise bad(f"priority {prio!r}: expected a whole number from 1 to {CLI_PRIORITY_PIVOT - 1} "
                      "(the largest wins)")
    return Entry(t.name, action, args, tuple(key), prio, index=i)


def _pair(v, name: str) -> tuple:
    if not isinstance(v, (list, tuple)) or len(v) != 2:
        raise ValueError(f"{name}: expected a pair [value, prefix length / mask / high], got {v!r}")
    return tuple(v)


def cli_command(e: Entry) -> str:
    """The simple_switch_CLI command that writes ``e`` (its priority turned around
    :data:`CLI_PRIORITY_PIVOT`, as bmv2's P4Runtime server does)."""
    args = [hex(v) for _, v, _ in e.params]
    if e.default:
        return " ".join(["table_set_default", e.table, e.action, *args])
    keys = []
    for m in e.key:
        kind, v = m.field.match_type, m.values
        if kind == "exact":
            keys.append(hex(v[0]))
        elif kind == "lpm":
            keys.append(f"{hex(v[0])}/{v[1]}")
        elif kind in ("ternary", "optional"):  # the CLI writes an optional field as a ternary one
            keys.append(f"{hex(v[0])}&&&{hex(v[1])}")
        else:
            keys.append(f"{v[0]}->{v[1]}")
    prio = [] if e.priority is None else [str(CLI_PRIORITY_PIVOT - e.priority)]
    return " ".join(["table_add", e.table, e.action, *keys, "=>", *args, *prio])


def cli_commands(entries: list[dict], pipe: Pipeline, source: str = "entries",
                 refused: list[str] | None = None) -> list[str]:
    """simple_switch_CLI commands for runtime-JSON ``entries``, checked against ``pipe``
    (:func:`parse_entries`, whose ``refused`` it takes)."""
    return [cli_command(e) for e in parse_entries(entries, pipe, source, refused)]


def read_entries(path: str | Path) -> list[dict]:
    """The ``table_entries`` of a runtime-JSON file (named in errors): routerlab's
    ``entries.json`` or a p4lang/tutorials ``sN-runtime.json``, whose ``target`` must then
    be bmv2 (its ``p4info`` and ``bmv2_json`` name what ``make`` built: routerlab compiles
    the program itself and checks the entries against that)."""
    p = Path(path)
    try:
        data = json.loads(p.read_text())
    except OSError as e:
        raise RouterlabError(f"{p}: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise DataFormatError(p, e.lineno, f"not valid JSON: {e.msg}") from None
    if not isinstance(data, dict) or not isinstance(data.get("table_entries"), list):
        raise DataFormatError(p, None, "expected an object with a list 'table_entries'")
    if data.get("target", "bmv2") != "bmv2":
        raise DataFormatError(p, None, f"target {data['target']!r}: routerlab runs bmv2 programs only")
    for other in ("multicast_group_entries", "clone_session_entries"):
        if data.get(other):
            raise DataFormatError(p, None, f"{other}: routerlab writes table entries only, and the program would run "
                                           "without these")
    return data["table_entries"]


def program_for(sc) -> str:
    """The program a scenario needs: gre (GRE, with the ACL), firewall (rules) or router."""
    if sc.gre:
        return "gre"
    return "firewall" if sc.rules else "router"


def scenario_entries(sc, route_limit: int | None = None, macs: tuple[str, str] | None = None) -> tuple[list[dict], int]:
    """Table entries for scenario ``sc`` on the testbed (ports 0 = DUT in, 1 = DUT out).

    The same description the other engines use: the route the traffic takes plus
    ``routes - 1`` host routes from the fill range, the firewall of
    :func:`routerlab.engines.rules.firewall` with its policy as the ACL's default action, and a
    GRE tunnel from the DUT's far address to the sink's. Returns the entries and the
    number of routes in them (``route_limit`` caps the fill routes). ``macs``: the
    router's output MAC and the sink's, which the forwarded frames take (default the
    namespace testbed's, :attr:`routerlab.testbed.namespaces.NamespaceTestbed.MACS`).
    """
    from routerlab.testbed.interface import DEST_NET, SINK_NET
    from routerlab.testbed.namespaces import NamespaceTestbed

    prog = program_for(sc)
    src, dst = macs or (NamespaceTestbed.MACS["d1"], NamespaceTestbed.MACS["s0"])
    fwd = {"src": src, "dst": dst, "port": 1}
    out = [{"table": "RlIngress.ipv4_lpm", "match": {"hdr.ipv4.dstAddr": [f"{DEST_NET}.0", 24]},
            "action_name": "RlIngress.forward", "action_params": fwd}]
    n_fill = sc.routes - 1 if route_limit is None else min(sc.routes - 1, max(route_limit - 1, 0))
    base = int(FILL_NET.network_address)
    out += [{"table": "RlIngress.ipv4_lpm", "match": {"hdr.ipv4.dstAddr": [base + i, 32]},
             "action_name": "RlIngress.forward", "action_params": fwd} for i in range(n_fill)]
    if prog in ("firewall", "gre"):
        rules, policy = firewall(sc)
        prio = 2 * len(rules) + 1  # a negated port range takes two entries
        for r in rules:
            match = {}
            for fld, cidr in (("hdr.ipv4.srcAddr", r.saddr), ("hdr.ipv4.dstAddr", r.daddr)):
                if cidr:
                    net = ipaddress.ip_network(cidr)
                    match[fld] = [str(net.network_address), str(net.netmask)]
            if r.proto:
                match["hdr.ipv4.protocol"] = [{"udp": 17, "tcp": 6}[r.proto], 0xFF]
            lo, hi = r.dport or (0, 65535)
            # a negated port range is the two ranges around it
            ranges = [(0, lo - 1), (hi + 1, 65535)] if r.dport_negate else [(lo, hi)]
            for a, b in ranges:
                if a > b:
                    continue
                prio -= 1  # the first rule wins: the largest priority
                out.append({"table": "RlIngress.acl", "match": {**match, "meta.dstPort": [a, b]},
                            "priority": prio, "action_name": "RlIngress.acl_" + ("allow" if r.action == "accept" else "deny"),
                            "action_params": {}})
        out.append({"table": "RlIngress.acl", "default_action": True, "action_params": {},
                    "action_name": "RlIngress.acl_" + ("allow" if policy == "accept" else "deny")})
    if sc.gre:
        out.append({"table": "RlIngress.tunnel", "match": {"standard_metadata.egress_spec": 1},
                    "action_name": "RlIngress.gre_encap",
                    "action_params": {"src": f"{SINK_NET}.1", "dst": f"{SINK_NET}.2"}})
    return out, 1 + n_fill
