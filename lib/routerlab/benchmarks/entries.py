"""``bench entries``: how long bmv2 takes to load a scenario's table entries (the
900k-route one by default) over P4Runtime and over the Thrift runtime CLI, side by side
in one run, each into a fresh switch on the namespace testbed.

Next to each time is its floor measured in the same run: the entries checked against the
program's P4Info and turned into what the control plane sends (P4Runtime updates, CLI
command lines) in routerlab's own process, with no switch. The ratio says how much of the
load is the switch and the transport, not routerlab.
"""

from __future__ import annotations

import time
from typing import Callable

from routerlab.analysis import scenarios
from routerlab.engines import p4

SCENARIO = "routes900k-multiflow-fw50"


def floor(control: str, entries: list[dict], pipe: p4.Pipeline) -> float:
    """Seconds to check ``entries`` and encode them as ``control`` sends them (P4Runtime:
    the protobuf updates, finsy's encoding; thrift: the CLI's command lines)."""
    t0 = time.perf_counter()
    checked = p4.parse_entries(entries, pipe, "floor")
    if control == "p4runtime":
        from finsy import P4Schema

        from routerlab.engines.p4runtime import table_entry

        schema = P4Schema(pipe.path)
        for e in checked:
            table_entry(e).encode_update(schema)
    else:
        for e in checked:
            p4.cli_command(e)
    return time.perf_counter() - t0


def run(scenario: str = SCENARIO, controls=("p4runtime", "thrift"),
        announce: Callable[[str], None] = lambda msg: None) -> dict:
    """Load ``scenario``'s entries into bmv2 once per control plane; return, per control,
    the seconds the load took (``load_s``, as the engine's record gives it) and its floor
    (``floor_s``, :func:`floor`), with the number of entries. Needs root, for the
    testbed."""
    from routerlab.engines.bmv2 import Bmv2
    from routerlab.testbed.namespaces import NamespaceTestbed

    sc = scenarios.load(scenario)
    entries, routes = p4.scenario_entries(sc)
    program = p4.program_for(sc)
    pipe = p4.Pipeline(p4.compile_program(program))
    out = {"scenario": scenario, "entries": len(entries), "routes": routes, "controls": {}}
    for control in controls:
        eng = Bmv2()
        eng.control = control
        eng.check(sc)
        announce(f"{control}: {len(entries)} entries into a fresh switch...")
        with NamespaceTestbed(generator="rlgen", placement=False) as tb:
            try:
                facts = eng.run(tb, program, entries, source=scenario)
            finally:
                eng.stop(tb)
        out["controls"][control] = {"load_s": facts["entries_load_s"],
                                    "floor_s": round(floor(control, entries, pipe), 2),
                                    "switch": eng.version()}
        announce(f"{control}: {facts['entries_load_s']:.1f} s")
    return out


def report(res: dict) -> str:
    """The times, their floors and ratios, and the two controls against each other."""
    lines = [f"bench entries: {res['entries']} table entries of {res['scenario']} ({res['routes']} routes), "
             "each control into a fresh bmv2", "",
             f"{'control':<10} {'load (s)':>10} {'entries/s':>10} {'floor (s)':>10} {'load/floor':>11}"]
    for control, r in res["controls"].items():
        rate = res["entries"] / r["load_s"] if r["load_s"] else float("inf")
        ratio = r["load_s"] / r["floor_s"] if r["floor_s"] else float("inf")
        lines.append(f"{control:<10} {r['load_s']:>10.1f} {rate:>10,.0f} {r['floor_s']:>10.1f} {ratio:>10.1f}x")
    c = res["controls"]
    if "p4runtime" in c and "thrift" in c and c["p4runtime"]["load_s"]:
        lines += ["", f"thrift / p4runtime: {c['thrift']['load_s'] / c['p4runtime']['load_s']:.2f}x"]
    lines += ["", "floor: the entries checked and encoded in routerlab's process, no switch (same run)"]
    return "\n".join(lines)
