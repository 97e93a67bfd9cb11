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
range fields carry a ``priority`` (bmv2's runtime CLI: the smallest number wins). An entry
with ``"default_action": true`` sets the table's default. They come either from a file
(the exercises' ``entries.json``) or from a scenario (:func:`scenario_entries`), and
:func:`cli_commands` turns them into simple_switch_CLI commands after checking every name
against the compiled program.
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from .. import cache
from ..datasets import project_dir
from ..errors import DataFormatError, EngineNotFound, RouterlabError
from .base import find_binary
from .kernel import FILL_NET
from .rules import firewall

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
    return d / "solution" / f"{program}.p4" if solution else d / f"{program}.p4"


def p4c() -> str:
    return find_binary("p4c", "p4c-bm2-ss")


def cache_dir() -> Path:
    return cache.folder("p4")


def compile_program(program: str | Path, solution: bool = True) -> Path:
    """Compile with ``p4c-bm2-ss`` into the cache; return the bmv2 JSON.

    Cached by the hash of the program, the shared includes and the compiler's path, so an
    edited program is recompiled and an unchanged one is not. Compiler errors are raised
    as they are (p4c names the file and line).
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
    if out.is_file():
        return out
    tmp = out.with_suffix(".tmp.json")
    p = subprocess.run([compiler, "--std", "p4-16", "--target", "bmv2", "--arch", "v1model", "-I", str(inc),
                        "-o", str(tmp), str(src)], capture_output=True, text=True)
    if p.returncode != 0:
        tmp.unlink(missing_ok=True)
        said = (p.stderr or p.stdout).strip()
        # p4c's first "file(line): ..." first, so that a one-line summary names file and line
        first = next((ln for ln in said.splitlines() if re.match(r".+\(\d+\):", ln)), "")
        raise RouterlabError(f"p4c-bm2-ss failed: {first or src}\n{said}")
    os.replace(tmp, out)
    return out


@dataclass(frozen=True)
class Field:
    name: str
    match_type: str
    bitwidth: int


@dataclass(frozen=True)
class Table:
    name: str
    keys: tuple[Field, ...]
    actions: tuple[str, ...]

    @property
    def prioritised(self) -> bool:
        return any(k.match_type in ("ternary", "range") for k in self.keys)


class Pipeline:
    """Tables, actions (with parameter names and widths) and counters of a compiled program."""

    def __init__(self, json_path: Path):
        j = json.loads(Path(json_path).read_text())
        widths = {}
        for ht in j["header_types"]:
            widths[ht["name"]] = {f[0]: f[1] for f in ht["fields"]}
        inst = {h["name"]: h["header_type"] for h in j["headers"]}
        self.actions = {a["name"]: [(p["name"], p["bitwidth"]) for p in a["runtime_data"]] for a in j["actions"]}
        self.tables: dict[str, Table] = {}
        for pipe in j["pipelines"]:
            for t in pipe["tables"]:
                keys = []
                for k in t["key"]:
                    hdr, fld = k["target"]
                    keys.append(Field(k["name"], k["match_type"], widths[inst[hdr]][fld]))
                self.tables[t["name"]] = Table(t["name"], tuple(keys), tuple(t["actions"]))
        #: counter array name -> number of cells
        self.counters = {c["name"]: c["size"] for c in j.get("counter_arrays", [])}
        self.registers = [r["name"] for r in j.get("register_arrays", [])]


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


def cli_commands(entries: list[dict], pipe: Pipeline, source: str = "entries",
                 refused: list[str] | None = None) -> list[str]:
    """simple_switch_CLI commands for runtime-JSON ``entries``, checked against ``pipe``.

    ``refused``: a list to which an entry that does not fit the program is added (why,
    naming it) and left out, instead of raising: a course skeleton, whose tables are not
    all written yet, still starts with the entries that fit.

    Raises
    ------
    DataFormatError
        An unknown table, action, field or parameter, a missing priority or a value that
        does not fit, naming the entry (its index in ``source``).
    """
    cmds = []
    for i, e in enumerate(entries):
        try:
            cmds.append(_cli_command(i, e, pipe, source))
        except DataFormatError as err:
            if refused is None:
                raise
            refused.append(str(err))
    return cmds


def _cli_command(i: int, e: dict, pipe: Pipeline, source: str) -> str:
    """The command of entry ``e``, the ``i``-th of ``source`` (see :func:`cli_commands`)."""
    where = f"table_entries[{i}]"

    def bad(msg):
        return DataFormatError(source, None, f"{where}: {msg}")
    t = pipe.tables.get(e.get("table"))
    if t is None:
        named = [n for n in pipe.tables if not n.startswith("tbl_")]  # tbl_*: made by the compiler
        raise bad(f"unknown table {e.get('table')!r}; the program has {', '.join(named) or 'no tables'} "
                  "(p4c leaves out a table that nothing applies)")
    action = e.get("action_name")
    if action not in t.actions:
        raise bad(f"table {t.name} has no action {action!r} (it has {', '.join(t.actions)})")
    params = e.get("action_params", {})
    want = pipe.actions[action]
    if set(params) != {n for n, _ in want}:
        raise bad(f"action {action} takes parameters {[n for n, _ in want]}, got {sorted(params)}")
    try:
        args = [hex(_int(params[n], w)) for n, w in want]
    except ValueError as err:
        raise bad(f"action {action}: {err}") from None
    if e.get("default_action"):
        return " ".join(["table_set_default", t.name, action, *args])
    match = dict(e.get("match", {}))
    unknown = set(match) - {k.name for k in t.keys}
    if unknown:
        raise bad(f"table {t.name} has no field {', '.join(sorted(unknown))} "
                  f"(it matches {', '.join(k.name for k in t.keys)})")
    keys = []
    try:
        for k in t.keys:
            v = match.get(k.name)
            if k.match_type == "exact":
                if v is None:
                    raise ValueError(f"exact field {k.name} is missing")
                keys.append(hex(_int(v, k.bitwidth)))
            elif k.match_type == "lpm":
                if v is None:
                    raise ValueError(f"lpm field {k.name} is missing")
                keys.append(f"{hex(_int(v[0], k.bitwidth))}/{int(v[1])}")
            elif k.match_type == "ternary":
                val, mask = v if v is not None else (0, 0)
                keys.append(f"{hex(_int(val, k.bitwidth))}&&&{hex(_int(mask, k.bitwidth))}")
            elif k.match_type == "range":
                lo, hi = v if v is not None else (0, (1 << k.bitwidth) - 1)
                keys.append(f"{_int(lo, k.bitwidth)}->{_int(hi, k.bitwidth)}")
            else:
                raise ValueError(f"match kind {k.match_type} is not supported here")
    except (ValueError, TypeError) as err:
        raise bad(str(err)) from None
    prio = []
    if t.prioritised:
        if "priority" not in e:
            raise bad(f"table {t.name} has ternary/range fields: the entry needs a priority")
        prio = [str(int(e["priority"]))]
    return " ".join(["table_add", t.name, action, *keys, "=>", *args, *prio])


def read_entries(path: str | Path) -> list[dict]:
    """The ``table_entries`` of a runtime-JSON file (named in errors)."""
    p = Path(path)
    try:
        data = json.loads(p.read_text())
    except json.JSONDecodeError as e:
        raise DataFormatError(p, e.lineno, f"not valid JSON: {e.msg}") from None
    if not isinstance(data, dict) or not isinstance(data.get("table_entries"), list):
        raise DataFormatError(p, None, "expected an object with a list 'table_entries'")
    return data["table_entries"]


def program_for(sc) -> str:
    """The program a scenario needs: gre (GRE, with the ACL), firewall (rules) or router."""
    if sc.gre:
        return "gre"
    return "firewall" if sc.rules else "router"


def scenario_entries(sc, route_limit: int | None = None) -> tuple[list[dict], int]:
    """Table entries for scenario ``sc`` on the testbed (ports 0 = DUT in, 1 = DUT out).

    The same description the other engines use: the route the traffic takes plus
    ``routes - 1`` host routes from the fill range, the firewall of
    :func:`routerlab.engines.firewall` with its policy as the ACL's default action, and a
    GRE tunnel from the DUT's far address to the sink's. Returns the entries and the
    number of routes in them (``route_limit`` caps the fill routes).
    """
    from ..testbed import DEST_NET, SINK_NET, Testbed

    prog = program_for(sc)
    fwd = {"src": Testbed.MACS["d1"], "dst": Testbed.MACS["s0"], "port": 1}
    out = [{"table": "RlIngress.ipv4_lpm", "match": {"hdr.ipv4.dstAddr": [f"{DEST_NET}.0", 24]},
            "action_name": "RlIngress.forward", "action_params": fwd}]
    n_fill = sc.routes - 1 if route_limit is None else min(sc.routes - 1, max(route_limit - 1, 0))
    base = int(FILL_NET.network_address)
    out += [{"table": "RlIngress.ipv4_lpm", "match": {"hdr.ipv4.dstAddr": [base + i, 32]},
             "action_name": "RlIngress.forward", "action_params": fwd} for i in range(n_fill)]
    if prog in ("firewall", "gre"):
        rules, policy = firewall(sc)
        prio = 0
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
                prio += 1
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
