"""Microbenchmarks without a network: Click and FastClick feeding packets from memory
through a chain and counting them, so that neither the generator nor the kernel is in
the picture.

- :func:`forwarding`: the router of ``routers/click/router-core.click`` with one route
  (the MoonRoute comparison), in Mpps and in instructions per packet.
- :func:`consolidation`: FastPath-style header-action consolidation. Chains of 1-3
  identical network functions (IP filter, source NAT, load balancer) run as they are and
  behind ``HeaderActionCache`` (``routers/click/elements``, an element package of our own
  built against the installed Click). The cost per packet is measured for a flow's first
  packet and for its later packets.

Instructions are counted under callgrind: they repeat from run to run on a noisy machine,
unlike time, which is reported next to them (ns per packet, median of repeats). Every
figure is a difference of two runs that differ only in the number of packets, so start-up
and the packet source cancel out.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import statistics
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from . import engines, scenarios
from .engines import click as click_engine
from .errors import EngineNotFound, RouterlabError

def _frame_hex() -> str:
    """One UDP packet from the generator side to the traffic's destination: what the
    router forwards in :func:`forwarding`."""
    from .testbed import Testbed
    from .traffic import udp_frame

    return udp_frame(Testbed.MACS["g0"], Testbed.MACS["d0"], "10.70.1.2", "10.71.0.1").hex()


@dataclass
class Run:
    """One Click process: wall seconds and, under callgrind, instructions executed."""

    seconds: float
    instructions: int | None
    output: str


def click_binary(engine: str = "click") -> str:
    """The Click (``click``) or FastClick (``fastclick``) userlevel binary."""
    if engine not in ("click", "fastclick"):
        raise RouterlabError(f"unknown Click flavour {engine!r} (click or fastclick)")
    return engines.get(engine).binary()


def run_click(binary: str, config: str, cwd: Path, *, callgrind: bool = False, env: dict | None = None,
              timeout: float = 600) -> Run:
    """Run ``config`` (text) with ``binary`` in ``cwd``; count instructions if asked."""
    conf = cwd / "bench.click"
    conf.write_text(config)
    cmd = [binary, str(conf)]
    if callgrind:
        if not shutil.which("valgrind"):
            raise EngineNotFound("valgrind is not installed (Debian package valgrind): no instruction counts")
        cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"] + cmd
    t0 = time.perf_counter()
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout,
                       env={**os.environ, **(env or {})})
    dt = time.perf_counter() - t0
    if p.returncode != 0:
        raise RouterlabError(f"{Path(binary).name} failed on the benchmark configuration:\n{p.stderr[-800:]}")
    instr = None
    if callgrind:
        m = re.search(r"Collected : (\d+)", p.stderr)
        if not m:
            raise RouterlabError(f"no instruction count from callgrind:\n{p.stderr[-400:]}")
        instr = int(m.group(1))
    return Run(dt, instr, p.stdout)


def environment(benchmark: str, engine_names, command: str) -> dict:
    """The environment record of a microbenchmark run (one row of ``environment.csv``)."""
    import sys

    from .datasets import host

    h = host()
    versions = []
    for name in engine_names:
        try:
            versions.append(f"{name}: {engines.get(name).version()}")
        except Exception as e:  # noqa: BLE001 - the record says what it could not learn
            versions.append(f"{name}: unknown ({e})")
    vg = subprocess.run(["valgrind", "--version"], capture_output=True, text=True).stdout.strip() \
        if shutil.which("valgrind") else "not installed"
    return {"benchmark": benchmark, "source": "routerlab microbenchmark (in memory, no network)",
            "where": f"{h['node']} ({h['virt']})",
            "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "kernel": h["kernel"],
            "cpu": h["cpu"], "engines": "; ".join(versions), "valgrind": vg,
            "python": sys.version.split()[0], "command": command}


def save(df, out: Path, name: str, env: dict):
    """Write a benchmark's rows to ``out/name.csv`` and its record to ``out/environment.csv``
    (replacing an earlier record of the same benchmark)."""
    import pandas as pd

    out.mkdir(parents=True, exist_ok=True)
    df.to_csv(out / f"{name}.csv", index=False)
    path = out / "environment.csv"
    old = pd.read_csv(path) if path.is_file() else pd.DataFrame()
    if len(old):
        old = old[old["benchmark"] != env["benchmark"]]
    pd.concat([old, pd.DataFrame([env])], ignore_index=True).to_csv(path, index=False)


# -- the element package -------------------------------------------------------------------

def elements_dir() -> Path:
    return click_engine.routers_dir() / "elements"


def build_package(binary: str | None = None) -> Path:
    """Build routerlab's Click element package against the installed Click; return the
    folder to put on CLICKPATH. Cached by the sources' hash and the Click binary."""
    binary = binary or click_binary("click")
    bindir = Path(binary).resolve().parent
    tools = {t: bindir / t for t in ("click-buildtool", "click-compile")}
    for t, path in tools.items():
        if not path.is_file():
            raise EngineNotFound(f"click: {t} not found next to {binary} (install Click with make install)")
    srcs = sorted(elements_dir().glob("*.cc")) + sorted(elements_dir().glob("*.hh"))
    h = hashlib.sha256(str(bindir).encode())
    for f in srcs:
        h.update(f.read_bytes())
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "routerlab" / "click-package"
    out = cache / h.hexdigest()[:12]
    if (out / "routerlab.uo").is_file():
        return out
    with tempfile.TemporaryDirectory(dir=cache.parent if cache.parent.exists() else None) as tmp:
        tmp = Path(tmp)
        for f in srcs:
            shutil.copy(f, tmp / f.name)
        ccs = [str(tmp / f.name) for f in srcs if f.suffix == ".cc"]

        def step(cmd, **kw):
            p = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True, **kw)
            if p.returncode != 0:
                raise RouterlabError(f"building the Click element package failed: {' '.join(cmd[:2])}\n"
                                     f"{(p.stderr or p.stdout)[-1500:]}")
            return p.stdout

        # findelem wants absolute paths; elem2package writes the package's init code
        conf = step([str(tools["click-buildtool"]), "findelem", "-r", "userlevel", "-P"], input="\n".join(ccs))
        (tmp / "upackage.cc").write_text(step([str(tools["click-buildtool"]), "elem2package", "routerlab"],
                                              input=conf))
        step([str(tools["click-compile"]), "-q", "-t", "userlevel", "-p", "routerlab.uo", *ccs, "upackage.cc"])
        out.mkdir(parents=True, exist_ok=True)
        shutil.copy(tmp / "routerlab.uo", out / "routerlab.uo.tmp")
        os.replace(out / "routerlab.uo.tmp", out / "routerlab.uo")
    return out


# -- forwarding (MoonRoute) -----------------------------------------------------------------

def forwarding_config(packets: int, burst: int = 32) -> str:
    """The router with one route, fed one prebuilt frame ``packets`` times from memory."""
    return (f"require(library services.click, library tables.click, library router-core.click);\n"
            "AddressInfo(in_if 10.70.1.1 10.70.1.0/24 02:72:6c:01:00:01,\n"
            "            out_if 10.70.2.1 10.70.2.0/24 02:72:6c:02:00:01);\n"
            f"InfiniteSource(DATA \\<{_frame_hex()}>, LIMIT {packets}, BURST {burst}, STOP true)\n"
            "  -> router :: IPRouter(02:72:6c:02:00:02, 02:72:6c:01:00:02, 1500);\n"
            "router[0] -> fwd :: Counter -> Discard;\n"
            "router[1] -> err :: Counter -> Discard;\n"
            "DriverManager(wait, print fwd.count, print err.count, stop);\n")


def _workdir() -> Path:
    d = Path(tempfile.mkdtemp(prefix="routerlab-bench-"))
    click_engine.write_configs(d, scenarios.load("single-flow"))
    return d


def forwarding(engine: str = "click", packets: int = 2_000_000, repeats: int = 3, burst: int = 32,
               callgrind_packets: int = 20_000) -> list[dict]:
    """Single-route forwarding from memory: Mpps and instructions per packet.

    One row per repeat: Mpps is ``packets`` over the time difference to a run with no
    packets. Instructions per packet (the same in every row: they repeat) come from two
    callgrind runs that differ by ``callgrind_packets``.
    """
    binary = click_binary(engine)
    d = _workdir()
    try:
        out = run_click(binary, forwarding_config(10, burst), d).output.split()
        if out[:2] != ["10", "0"]:
            raise RouterlabError(f"{engine}: the router did not forward the benchmark packet (printed {out})")
        times = []
        for _ in range(repeats):
            t0 = run_click(binary, forwarding_config(0, burst), d).seconds
            t1 = run_click(binary, forwarding_config(packets, burst), d).seconds
            times.append(max(t1 - t0, 1e-9))
        i0 = run_click(binary, forwarding_config(1000, burst), d, callgrind=True).instructions
        i1 = run_click(binary, forwarding_config(1000 + callgrind_packets, burst), d, callgrind=True).instructions
    finally:
        shutil.rmtree(d, ignore_errors=True)
    return [{"engine": engine, "burst": burst, "repeat": r, "packets": packets, "mpps": packets / dt / 1e6,
             "ns_per_packet": dt / packets * 1e9, "instructions_per_packet": (i1 - i0) / callgrind_packets}
            for r, dt in enumerate(times)]


def batch_sizes(engine: str = "fastclick", sizes=(1, 2, 4, 8, 16, 32, 64, 128, 256), progress=None, **kw):
    """:func:`forwarding` at each batch size (the source's BURST: FastClick passes batches
    of that size through the router). A DataFrame, one row per size and repeat."""
    import pandas as pd

    rows = []
    for i, b in enumerate(sizes):
        rows += forwarding(engine, burst=b, **kw)
        if progress:
            progress(i + 1, len(sizes))
    return pd.DataFrame(rows)


# -- consolidation (FastPath) -----------------------------------------------------------------

NFS = ("IPFilter", "MazuNAT", "Maglev")
#: The published NF names and what stands for them here.
NF_ELEMENTS = {"IPFilter": "IPFilter with 10 deny rules and allow all",
               "MazuNAT": "SourceNAT (IPRewriter, source address and port)",
               "Maglev": "LoadBalancer (HashSwitch + IPRewriter, destination address)"}


def _nf(kind: str, i: int) -> str:
    if kind == "IPFilter":
        rules = ", ".join(f"deny src host 192.0.2.{10 * i + k + 1}" for k in range(10))
        return f"IPFilter({rules}, allow all)"
    if kind == "MazuNAT":
        return f"IPRewriter(pattern 10.70.{10 + i}.1 1024-65535# - - 0 0)"
    if kind == "Maglev":
        return "LoadBalancer(" + ", ".join(f"10.72.{i}.{b}" for b in range(1, 5)) + ")"
    raise RouterlabError(f"unknown network function {kind!r}; known: {', '.join(NFS)}")


def write_pcap(path: Path, flows: list[int]):
    """A pcap of 64-byte UDP frames, one per entry of ``flows`` (a flow number n: source
    10.70.1.(2 + n // 60000), port 1024 + n % 60000), in that order, with correct IPv4
    and UDP checksums."""
    from .testbed import Testbed
    from .traffic import udp_frame, write_pcap as write

    frames = {}
    for n in flows:
        if n not in frames:
            frames[n] = udp_frame(Testbed.MACS["g0"], Testbed.MACS["d0"], f"10.70.1.{2 + n // 60000}", "10.71.0.1",
                                  sport=1024 + n % 60000)
    write(path, (frames[n] for n in flows))


def chain_config(kind: str, length: int, cached: bool, pcap: Path) -> str:
    """A chain of ``length`` identical NFs (0: the packet source alone), plain or behind
    HeaderActionCache, fed the frames of ``pcap`` from memory; prints the packets out."""
    chain = " -> ".join(_nf(kind, i) for i in range(length)) or "Null"
    src = f"FromDump({pcap}, STOP true, TIMING false) -> Strip(14) -> CheckIPHeader"
    head = 'require(package "routerlab", library services.click);\n'
    if cached:
        body = f"{src} -> cache :: HeaderActionCache;\ncache[1] -> {chain} -> [1]cache;\ncache[0] -> out :: Counter -> Discard;\n"
    else:
        body = f"{src} -> {chain} -> out :: Counter -> Discard;\n"
    return head + body + "DriverManager(wait, print out.count, stop);\n"


def consolidation(kinds=NFS, lengths=(1, 2, 3), flows: int = 1000, first_packets: int = 5000,
                  later_packets: int = 20_000, timed_scale: int = 10, repeats: int = 3, progress=None,
                  engine: str = "click"):
    """Cost per packet of NF chains, plain and consolidated, for first and later packets.

    Returns a long DataFrame, one row per configuration, packet kind and timed repeat:
    nf, actions (chain length), variant (``chain`` or ``consolidated``), packet (``first``
    or ``later``), repeat, instructions (per packet, counted once: they repeat) and ns (per
    packet in that repeat). The source's cost is subtracted from both.

    - first packets: ``first_packets`` packets of as many flows, against no packets;
    - later packets: ``flows`` flows warmed up with 20 packets each (every first packet is
      in there), then ``later_packets`` more, against the warm-up alone.

    Timed runs use ``timed_scale`` times more packets (time needs long runs; instruction
    counts do not). The source (reading the frames from a pcap in memory, CheckIPHeader)
    is measured the same way with no NF and subtracted.
    """
    import pandas as pd

    binary = click_binary(engine)
    pkg = build_package(binary)
    env = {"CLICKPATH": f"{pkg}:"}
    d = _workdir()
    warm = [i % flows for i in range(20 * flows)]  # every flow seen: its first packet is in here
    # a NAT has 64,512 ports per address: more first packets than that would be refused
    sizes = {"counted": (first_packets, later_packets),
             "timed": (min(first_packets * timed_scale, 60_000), later_packets * timed_scale)}
    pcaps = {}
    for mode, (n_first, n_later) in sizes.items():
        for name, order in {"none": [], "first": list(range(n_first)), "warm": warm,
                            "later": warm + [i % flows for i in range(n_later)]}.items():
            pcaps[mode, name] = (d / f"{mode}-{name}.pcap", len(order))
            write_pcap(d / f"{mode}-{name}.pcap", order)

    def cost(kind, length, cached, callgrind):
        """Per packet, for one configuration: [(first, later)] per repeat (instructions: one)."""
        mode = "counted" if callgrind else "timed"
        n_first, n_later = sizes[mode]
        out = []
        for _ in range(1 if callgrind else repeats):
            runs = {}
            for name in ("none", "first", "warm", "later"):
                path, n = pcaps[mode, name]
                r = run_click(binary, chain_config(kind, length, cached, path), d, callgrind=callgrind, env=env)
                if int(r.output.split()[0]) != n:
                    raise RouterlabError(f"{kind} x{length}: {r.output.split()[0]} of {n} packets came out "
                                         "(the benchmark chains must drop nothing)")
                runs[name] = r.instructions if callgrind else r.seconds * 1e9
            out.append(((runs["first"] - runs["none"]) / n_first, (runs["later"] - runs["warm"]) / n_later))
        return out

    rows = []
    try:
        configs = [(k, n, c) for k in kinds for n in lengths for c in (False, True)]
        (src_i,) = cost(kinds[0], 0, False, True)
        src_t = [statistics.median(x) for x in zip(*cost(kinds[0], 0, False, False))]
        for i, (kind, n, cached) in enumerate(configs):
            (fi, li), timed = cost(kind, n, cached, True)[0], cost(kind, n, cached, False)
            for rep, (ft, lt) in enumerate(timed):
                for packet, instr, ns in (("first", fi - src_i[0], ft - src_t[0]),
                                          ("later", li - src_i[1], lt - src_t[1])):
                    rows.append({"engine": engine, "nf": kind, "actions": n,
                                 "variant": "consolidated" if cached else "chain",
                                 "packet": packet, "repeat": rep, "instructions": instr, "ns": ns})
            if progress:
                progress(i + 1, len(configs))
    finally:
        shutil.rmtree(d, ignore_errors=True)
    return pd.DataFrame(rows)


def reductions(df):
    """Reduction in cost per later packet from consolidation, by NF and chain length:
    ``1 - consolidated / chain`` (a ratio; negative = consolidation costs more)."""
    later = df[df["packet"] == "later"].pivot_table(index=["nf", "actions"], columns="variant",
                                                   values=["instructions", "ns"], aggfunc="median")
    out = later["instructions"][["chain", "consolidated"]].rename(columns=lambda c: f"{c}_instructions")
    out["reduction_instructions"] = 1 - later["instructions"]["consolidated"] / later["instructions"]["chain"]
    out["reduction_ns"] = 1 - later["ns"]["consolidated"] / later["ns"]["chain"]
    return out.reset_index()
