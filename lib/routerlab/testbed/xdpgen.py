"""The XDP generator: rlgen's frames run through an XDP program with ``BPF_PROG_RUN`` and
live frames (kernel 5.18 or later), paced in the program and redirected out of the
generator's veth (``bpf/xdp_gen.c``, driven by ``csrc/rlxdpgen.c``), the technique of
xdp-tools' ``xdp-trafficgen``. It costs far less per packet than rlgen's AF_PACKET sends,
so the generator's CPU is not what limits the chain. Trials use it by default
(:func:`routerlab.testbed.traffic.run_trial` on a testbed whose ``generator`` is "xdp"); the
testbed puts its sink, an XDP program that counts and drops (``bpf/xdp_sink.c``), on the
sink's veth (:mod:`routerlab.testbed`).
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from routerlab.errors import RouterlabError, ToolMissing
from routerlab.testbed.interface import Testbed
from routerlab.testbed.shell import sh


def loader() -> Path:
    """The compiled loader (``csrc/rlxdpgen.c``, linked with libbpf), built at first use."""
    from routerlab.cache import compiled

    if not Path("/usr/include/bpf/libbpf.h").is_file():
        raise ToolMissing("the XDP generator needs libbpf's headers (Debian package libbpf-dev)")
    return compiled("rlxdpgen", ("-lbpf",))


def program(name: str = "xdp_gen") -> Path:
    """A compiled XDP program of ``bpf/`` (``xdp_gen`` or ``xdp_sink``)."""
    from routerlab import cache

    return cache.bpf_object(name)


def version() -> str:
    """A version string: the loader's and the program's names and source hashes."""
    return f"rlxdpgen {loader().name.split('-', 1)[1]}, xdp_gen {program().stem.split('-', 1)[-1]}"


@dataclass(frozen=True)
class XdpRun:
    """What one run of the XDP generator reports: frames redirected (``sent``; ``legit``
    of them meant to pass the firewall), seconds from the first to the last (``span_s``),
    the worst lateness behind its schedule and the lags over 5 ms added up (milliseconds),
    and the program's runs (sent or early)."""

    sent: int
    legit: int
    span_s: float
    late_ms: float
    lagged_ms: float
    runs: int


def parse(line: str) -> XdpRun:
    """The loader's one line (``sent=N legit=N span_s=S late_ms=L lagged_ms=G runs=R``)."""
    try:
        kv = dict(part.split("=", 1) for part in line.split())
        return XdpRun(int(kv["sent"]), int(kv["legit"]), float(kv["span_s"]), float(kv["late_ms"]),
                      float(kv["lagged_ms"]), int(kv["runs"]))
    except (KeyError, ValueError) as e:
        raise RouterlabError(f"rlxdpgen: unexpected output {line!r}") from e


def ifindex(ns: str, dev: str) -> int:
    import json

    return json.loads(sh("ip", "-n", ns, "-j", "link", "show", "dev", dev))[0]["ifindex"]


def run(tb: Testbed, rate_pps: float, duration_s: float, frames: str, burst: int = 32) -> XdpRun:
    """Send ``frames`` (as ``rlgen --print-frames`` prints them), in turn, out of the
    generator's veth at ``rate_pps`` (0: as fast as it can) for ``duration_s`` seconds,
    in bursts of ``burst`` frames back to back (rlgen's batches), on the generator's CPU. The receiving veth must receive through NAPI (an XDP program
    or GRO on it): a veth takes XDP redirects only then."""
    p = tb.spawn(tb.ns_tg, str(loader()), str(program()), str(ifindex(tb.ns_tg, tb.tg_if)), f"{rate_pps:.3f}",
                 f"{duration_s:g}", str(burst), cpu=tb.gen_cpu, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                 stderr=subprocess.PIPE, text=True)
    try:
        out, err = p.communicate(frames, timeout=3 * duration_s + 30)
    finally:
        if p in tb.procs:
            tb.procs.remove(p)
    if p.returncode != 0:
        raise RouterlabError(f"rlxdpgen failed (exit {p.returncode}): {err.strip()[-300:]}"
                             + (" (live frames need kernel 5.18 or later)" if "Invalid argument" in err else ""))
    return parse(out.strip().splitlines()[-1])
