"""The XDP generator: one frame run through an XDP program with ``BPF_PROG_RUN`` and live
frames (kernel 5.18 or later), paced in the program and redirected out of the generator's
veth (``bpf/xdp_gen.c``, driven by ``csrc/rlxdpgen.c``), the technique of xdp-tools'
``xdp-trafficgen``. It costs far less per packet than rlgen's AF_PACKET sends, so the
generator's CPU is not what limits the chain. And the XDP sink (``bpf/xdp_sink.c``):
counts and drops every frame in XDP.

So far ``routerlab bench generators`` measures it next to rlgen (ceiling and rate error);
trials still use rlgen (:mod:`routerlab.traffic`).
"""

from __future__ import annotations

import json
import subprocess
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from .errors import RouterlabError, ToolMissing
from .testbed import Testbed, sh


def loader() -> Path:
    """The compiled loader (``csrc/rlxdpgen.c``, linked with libbpf), built at first use."""
    from .traffic import compiled

    if not Path("/usr/include/bpf/libbpf.h").is_file():
        raise ToolMissing("the XDP generator needs libbpf's headers (Debian package libbpf-dev)")
    return compiled("rlxdpgen", ("-lbpf",))


def program(name: str = "xdp_gen") -> Path:
    """A compiled XDP program of ``bpf/`` (``xdp_gen`` or ``xdp_sink``)."""
    from . import cache

    return cache.bpf_object(name)


@dataclass(frozen=True)
class XdpRun:
    """What one run of the XDP generator reports: frames redirected (``sent``), seconds
    from the first to the last (``span_s``), the worst lateness behind its schedule and
    the lags over 5 ms added up (milliseconds), and the program's runs (sent or early)."""

    sent: int
    span_s: float
    late_ms: float
    lagged_ms: float
    runs: int


def parse(line: str) -> XdpRun:
    """The loader's one line (``sent=N span_s=S late_ms=L lagged_ms=G runs=R``)."""
    try:
        kv = dict(part.split("=", 1) for part in line.split())
        return XdpRun(int(kv["sent"]), float(kv["span_s"]), float(kv["late_ms"]), float(kv["lagged_ms"]),
                      int(kv["runs"]))
    except (KeyError, ValueError) as e:
        raise RouterlabError(f"rlxdpgen: unexpected output {line!r}") from e


def ifindex(ns: str, dev: str) -> int:
    return json.loads(sh("ip", "-n", ns, "-j", "link", "show", "dev", dev))[0]["ifindex"]


def run(tb: Testbed, rate_pps: float, duration_s: float, frame: bytes) -> XdpRun:
    """Send ``frame`` out of the generator's veth at ``rate_pps`` (0: as fast as it can)
    for ``duration_s`` seconds, on the generator's CPU. The receiving veth needs an XDP
    program attached (a veth takes XDP redirects only then)."""
    p = tb.spawn(tb.ns_tg, str(loader()), str(program()), str(ifindex(tb.ns_tg, tb.tg_if)), f"{rate_pps:.3f}",
                 f"{duration_s:g}", frame.hex(), cpu=tb.gen_cpu, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                 text=True)
    try:
        out, err = p.communicate(timeout=3 * duration_s + 30)
    finally:
        tb.procs.remove(p)
    if p.returncode != 0:
        raise RouterlabError(f"rlxdpgen failed (exit {p.returncode}): {err.strip()[-300:]}"
                             + (" (live frames need kernel 5.18 or later)" if "Invalid argument" in err else ""))
    return parse(out.strip().splitlines()[-1])


@contextmanager
def sink(ns: str, dev: str):
    """Count and drop every frame ``dev`` receives, in XDP (``bpf/xdp_sink.c``), while the
    block runs. Yields a function that returns the frames counted so far; the program is
    detached after the block (and goes with the namespace if the run dies)."""
    sh("ip", "-n", ns, "link", "set", "dev", dev, "xdpdrv", "obj", str(program("xdp_sink")), "sec", "xdp")
    try:
        prog = json.loads(sh("ip", "-n", ns, "-j", "link", "show", "dev", dev))[0]["xdp"]["prog"]["id"]
        (map_id,) = json.loads(sh("bpftool", "-j", "prog", "show", "id", str(prog)))["map_ids"]

        def count() -> int:
            values = json.loads(sh("bpftool", "-j", "map", "lookup", "id", str(map_id), "key", "0", "0", "0", "0"))
            return sum(_u64(v["value"]) for v in values["values"])
        yield count
    finally:
        sh("ip", "-n", ns, "link", "set", "dev", dev, "xdpdrv", "off")


def _u64(value) -> int:
    """A per-CPU value as bpftool's JSON gives it: a number, or its bytes in hex."""
    if isinstance(value, int):
        return value
    return int.from_bytes(bytes(int(b, 16) for b in value), "little")
