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

The configurations are files in ``routers/click/microbench/`` (:data:`CONFIGS`), run with
their ``define`` parameters on the command line, next to copies of the router files whose
libraries they use; only the chain under test is generated (:func:`chain_click`).

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

from routerlab import cache
from routerlab.engines import registry
from routerlab.analysis import datasets, scenarios
from routerlab.engines import click as click_engine
from routerlab.errors import EngineNotFound, RouterlabError
from routerlab.progress import Progress, silent, Step


def _frame_hex() -> str:
    """One UDP packet from the generator side to the traffic's destination: what the
    router forwards in :func:`forwarding`."""
    from routerlab.testbed.namespaces import NamespaceTestbed
    from routerlab.testbed.traffic import udp_frame

    return udp_frame(NamespaceTestbed.MACS["g0"], NamespaceTestbed.MACS["d0"], "10.70.1.2", "10.71.0.1").hex()


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
    return registry.get(engine).binary()


def run_click(binary: str, config: str, cwd: Path, defines: dict | None = None, *, callgrind: bool = False,
              env: dict | None = None, timeout: float = 600) -> Run:
    """Run the configuration file ``config`` of ``cwd`` (a name in :data:`CONFIGS`) with
    ``binary``, its ``define`` parameters set to ``defines``; count instructions if asked."""
    cmd = [binary, str(cwd / config), *[f"{k}={v}" for k, v in (defines or {}).items()]]
    if callgrind:
        if not shutil.which("valgrind"):
            raise EngineNotFound("valgrind is not installed (Debian package valgrind): no instruction counts")
        from routerlab.engines.builds import program_env, real_program

        # the binary itself, not the wrapper of an install from a bundle (callgrind counts
        # the program it starts, which would be the wrapper's shell), with what it sets
        cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", str(real_program(binary)), *cmd[1:]]
        env = {**os.environ, **program_env(binary), **(env or {})}
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


def save(df, out: Path, name: str, engine_names, command: str | None = None) -> dict:
    """Write a benchmark's rows to ``out/name.csv`` and its environment record to
    ``out/experiments.csv`` (experiment = the benchmark's name; an earlier record of it is
    replaced): the engines and their versions, valgrind's and Python's, the command (default:
    how this process was started, :func:`routerlab.analysis.datasets.invocation`)."""
    import sys

    out.mkdir(parents=True, exist_ok=True)
    df.to_csv(out / f"{name}.csv", index=False)
    versions = []
    for engine in engine_names:
        try:
            versions.append(registry.get(engine).version())
        except Exception as e:  # noqa: BLE001 - the record says what it could not learn
            versions.append(f"unknown ({e})")
    vg = subprocess.run(["valgrind", "--version"], capture_output=True, text=True).stdout.strip() \
        if shutil.which("valgrind") else "not installed"
    return datasets.record_environment(out, name, "routerlab microbenchmark (in memory, no network)",
                                       engine="; ".join(engine_names), engine_version="; ".join(versions),
                                       versions=f"valgrind: {vg}; python: {sys.version.split()[0]}",
                                       command=command or datasets.invocation())


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
    packages = cache.folder("click-package")
    out = packages / h.hexdigest()[:12]
    if (out / "routerlab.uo").is_file():
        return out
    with tempfile.TemporaryDirectory(dir=packages.parent) as tmp:
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


# -- the configurations ---------------------------------------------------------------------

#: The configurations of ``routers/click/microbench/``: the router fed from memory, the
#: plain chain and the chain behind HeaderActionCache (and the library of NFs they use).
CONFIGS = {"forwarding": "forwarding.click", "chain": "nf-chain.click", "consolidated": "nf-chain-cached.click"}


def configs_dir() -> Path:
    """``routers/click/microbench`` of the clone or the installed package."""
    return click_engine.routers_dir() / "microbench"


def write_configs(folder: Path) -> Path:
    """Copy the router files (with ``tables.click`` for one route: scenario single-flow) and
    the microbenchmark's configurations to ``folder``, where they find each other's
    libraries."""
    click_engine.write_configs(folder, scenarios.load("single-flow"))
    for f in configs_dir().glob("*.click"):
        shutil.copy(f, folder / f.name)
    return folder


def _workdir() -> Path:
    """A fresh folder with the configurations (the caller removes it)."""
    d = Path(tempfile.mkdtemp(prefix="routerlab-bench-"))
    try:
        return write_configs(d)
    except BaseException:
        shutil.rmtree(d, ignore_errors=True)
        raise


# -- forwarding (MoonRoute) -----------------------------------------------------------------

def forwarding_defines(packets: int, burst: int = 32) -> dict:
    """``forwarding.click``'s parameters: one prebuilt frame, ``packets`` times, ``burst`` at a time."""
    return {"FRAME": _frame_hex(), "PACKETS": packets, "BURST": burst}


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
        conf = CONFIGS["forwarding"]
        out = run_click(binary, conf, d, forwarding_defines(10, burst)).output.split()
        if out[:2] != ["10", "0"]:
            raise RouterlabError(f"{engine}: the router did not forward the benchmark packet (printed {out})")
        times = []
        for _ in range(repeats):
            t0 = run_click(binary, conf, d, forwarding_defines(0, burst)).seconds
            t1 = run_click(binary, conf, d, forwarding_defines(packets, burst)).seconds
            times.append(max(t1 - t0, 1e-9))
        i0 = run_click(binary, conf, d, forwarding_defines(1000, burst), callgrind=True).instructions
        i1 = run_click(binary, conf, d, forwarding_defines(1000 + callgrind_packets, burst),
                       callgrind=True).instructions
    finally:
        shutil.rmtree(d, ignore_errors=True)
    return [{"engine": engine, "burst": burst, "repeat": r, "packets": packets, "mpps": packets / dt / 1e6,
             "ns_per_packet": dt / packets * 1e9, "instructions_per_packet": (i1 - i0) / callgrind_packets}
            for r, dt in enumerate(times)]


def batch_sizes(engine: str = "fastclick", sizes=(1, 2, 4, 8, 16, 32, 64, 128, 256), progress: Progress = silent,
                **kw):
    """:func:`forwarding` at each batch size (the source's BURST: FastClick passes batches
    of that size through the router). A DataFrame, one row per size and repeat.
    ``progress`` is told each size as it is done."""
    import pandas as pd

    rows = []
    for i, b in enumerate(sizes):
        rows += forwarding(engine, burst=b, **kw)
        progress(Step(f"batch size {b}", i + 1, len(sizes)))
    return pd.DataFrame(rows)


# -- consolidation (FastPath) -----------------------------------------------------------------

NFS = ("IPFilter", "MazuNAT", "Maglev")
#: The published NF names and what stands for them here.
NF_ELEMENTS = {"IPFilter": "IPFilter with 10 deny rules and allow all",
               "MazuNAT": "SourceNAT (IPRewriter, source address and port)",
               "Maglev": "LoadBalancer (HashSwitch + IPRewriter, destination address)"}


def _nf(kind: str, i: int) -> str:
    """The ``i``-th NF of a chain of ``kind``: an element class of ``nfs.click`` (or
    ``services.click``) with addresses of its own."""
    if kind == "IPFilter":
        return "DenyTen(" + ", ".join(f"192.0.2.{10 * i + k + 1}" for k in range(10)) + ")"
    if kind == "MazuNAT":
        return f"SourceRewrite(10.70.{10 + i}.1)"
    if kind == "Maglev":
        return "LoadBalancer(" + ", ".join(f"10.72.{i}.{b}" for b in range(1, 5)) + ")"
    raise RouterlabError(f"unknown network function {kind!r}; known: {', '.join(NFS)}")


def write_pcap(path: Path, flows: list[int]):
    """A pcap of 64-byte UDP frames, one per entry of ``flows`` (a flow number n: source
    10.70.1.(2 + n // 60000), port 1024 + n % 60000), in that order, with correct IPv4
    and UDP checksums."""
    from routerlab.testbed.namespaces import NamespaceTestbed
    from routerlab.testbed.traffic import udp_frame, write_pcap as write

    frames = {}
    for n in flows:
        if n not in frames:
            frames[n] = udp_frame(NamespaceTestbed.MACS["g0"], NamespaceTestbed.MACS["d0"], f"10.70.1.{2 + n // 60000}", "10.71.0.1",
                                  sport=1024 + n % 60000)
    write(path, (frames[n] for n in flows))


def chain_click(kind: str, length: int) -> str:
    """The generated library ``chain.click``: elementclass ``Chain``, ``length`` NFs of
    ``kind`` one after the other (0: ``Null``, the packet source alone), each with
    addresses of its own. ``nf-chain.click`` and ``nf-chain-cached.click`` run it."""
    # Generated, as tables.click is for the routers: a Click configuration has neither
    # loops nor arithmetic, so "n instances, the i-th with addresses derived from i" cannot
    # be written once with a length parameter. Click flattens the compound element: the
    # chain runs exactly as if it were written out in place.
    chain = " -> ".join(_nf(kind, i) for i in range(length)) or "Null"
    return (f"// chain.click -- generated by routerlab (routerlab.measuring.microbench.chain_click): {length} x {kind}\n"
            "// Do not edit: the benchmark writes it for each chain it runs.\n\n"
            f"elementclass Chain {{\n  input -> {chain} -> output;\n}}\n")


def write_chain(folder: Path, kind: str, length: int) -> Path:
    """Write ``chain.click`` for a chain of ``length`` NFs of ``kind`` into ``folder``."""
    path = folder / "chain.click"
    path.write_text(chain_click(kind, length))
    return path


def consolidation(kinds=NFS, lengths=(1, 2, 3), flows: int = 1000, first_packets: int = 5000,
                  later_packets: int = 20_000, timed_scale: int = 10, repeats: int = 3, progress: Progress = silent,
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
        write_chain(d, kind, length)
        out = []
        for _ in range(1 if callgrind else repeats):
            runs = {}
            for name in ("none", "first", "warm", "later"):
                path, n = pcaps[mode, name]
                r = run_click(binary, CONFIGS["consolidated" if cached else "chain"], d, {"PCAP": path},
                              callgrind=callgrind, env=env)
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
            progress(Step(f"{kind} x{n}{' consolidated' if cached else ''}", i + 1, len(configs)))
    finally:
        shutil.rmtree(d, ignore_errors=True)
    return pd.DataFrame(rows)
