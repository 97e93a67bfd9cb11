"""Where lost packets went: every drop along the testbed's path, by the counter that took it.

The kernel names each packet it frees as dropped with a reason (tracepoint
``skb:kfree_skb``: CPU_BACKLOG, NETFILTER_DROP, QDISC_DROP, FULL_RING, ...), which is how
pwru and retis find where packets die. :class:`DropCounter` attaches a small BPF program
(``bpf/drop_reasons.c``) to that tracepoint for the life of one :class:`Testbed`; it counts
per (network namespace, reason), and :meth:`DropCounter.snapshot` keeps the testbed's own
namespaces by their role (tg, dut, sink). It leaves out packets on a loopback device: a
trial's packets never cross one, the testbed's own control connections (bmv2's runtime
CLI) do. Around each trial :meth:`DropCounter.read` also
takes the counters that see drops the tracepoint cannot (XDP frames are not socket
buffers: a full veth ring returns them without ``kfree_skb``) or that say why (softnet
squeezes): each veth's link and XDP counters, the testbed's qdiscs, the per-CPU softnet
counters (global: every namespace of the machine adds to them) and the engine's own.

:func:`attribute` sets them against the trial's loss (``lost = tx - rx``), leaving out the
drops that are the testbed's design, not loss (the sink's counting drop,
:data:`KERNEL_COPY_DROPPED`, :data:`FIREWALL_DROPS`). sweep.py and search.py run every
trial with a counter: trials.csv gets ``lost``, ``lost_attributed``, ``lost_unexplained``,
``trace_missed`` and ``drops``, and ``drops.csv`` beside it every counter that moved.

The tracer's blind spot: on this kernel (6.18) the program is now and then not run for a
burst of events (32 at a time: one batch of the generator), although perf counts every
one on the same trials, the kernel's count of the program's runs is short by as many and it
reports no recursion miss; a classic tracepoint program misses the same way. Seen only on
the kernel forwarding paths (packets through the per-CPU backlog), never on the XDP path;
how often depends on the machine (docs/testbed.md). The sink, which counts every packet
itself, measures it in each trial (``trace_missed``).

Loading: bpftool 7.1 (Debian bookworm) has no ``autoattach``, so the program is loaded and
attached with Debian's libbpf (``libbpf.so.1``, through ctypes) and its link and map are
pinned under ``/sys/fs/bpf/routerlab/<prefix>``. Removing the pins detaches it, and
``routerlab clean`` removes the pins a killed run left (:func:`routerlab.testbed.cleanup.clean`).
The bpf filesystem (``/sys/fs/bpf``) and tracefs (``/sys/kernel/tracing``: the
tracepoint's format and id) are mounted when they are not, as systemd does at boot; they
stay mounted.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import hashlib
import json
import logging
import os
import re
import shutil
import struct
from dataclasses import dataclass, field
from pathlib import Path

from routerlab import cache
from routerlab.analysis.datasets import KINDS, TrialWriter
from routerlab.engines.base import Engine
from routerlab.errors import RouterlabError, ToolMissing
from routerlab.testbed.interface import BPF_PINS, Testbed
from routerlab.testbed.shell import sh, veth_queue_counters

#: Where the tracepoint's format is read, in order (tracefs, then its debugfs mount).
TRACEFS = Path("/sys/kernel/tracing")
FORMAT_FILES = (TRACEFS / "events/skb/kfree_skb/format",
                Path("/sys/kernel/debug/tracing/events/skb/kfree_skb/format"))
BTF = Path("/sys/kernel/btf/vmlinux")
BPF_FS = BPF_PINS.parent
#: The program (lib/routerlab/bpf/<name>.c), its function and its map.
PROGRAM, FUNCTION, MAP = "drop_reasons", "rl_kfree_skb", "rl_drops"
#: Drop reasons above this are a subsystem's own (SKB_DROP_REASON_SUBSYS_SHIFT).
SUBSYS_SHIFT = 16


# -- reason names ------------------------------------------------------------------------------

def tracepoint_format() -> str:
    """The text of ``skb:kfree_skb``'s format file (tracefs, mounted first if root can)."""
    if os.geteuid() == 0 and not any(f.is_file() for f in FORMAT_FILES):
        with contextlib.suppress(RouterlabError):
            mount("tracefs", TRACEFS)
    for f in FORMAT_FILES:
        if f.is_file():
            return f.read_text()
    raise ToolMissing(f"no tracefs: {FORMAT_FILES[0]} is missing (mount -t tracefs tracefs {TRACEFS})")


def reason_names(fmt: str | None = None) -> dict[int, str]:
    """Drop reason number -> name (``CPU_BACKLOG``), as this kernel prints them: parsed
    from the ``__print_symbolic(REC->reason, ...)`` table of the tracepoint's print fmt
    (the enum changes between kernels, so it is never written here)."""
    fmt = tracepoint_format() if fmt is None else fmt
    m = re.search(r"__print_symbolic\(\s*REC->reason\s*,(.*)", fmt, re.S)
    if not m:
        raise RouterlabError(f"{FORMAT_FILES[0]}: no reason table (__print_symbolic(REC->reason, ...)) "
                             "in the print fmt: this kernel does not name its drop reasons")
    names = {int(n): s for n, s in re.findall(r'\{\s*(\d+)\s*,\s*"([^"]+)"\s*\}', m.group(1))}
    if not names:
        raise RouterlabError(f"{FORMAT_FILES[0]}: the reason table of the print fmt is empty")
    return names


def reason_name(reason: int, names: dict[int, str]) -> str:
    """The name of ``reason``; a subsystem's reasons (mac80211, openvswitch, ...) are not in
    the core table and are named by subsystem and code."""
    if reason in names:
        return names[reason]
    if reason >> SUBSYS_SHIFT:
        return f"SUBSYS{reason >> SUBSYS_SHIFT}_{reason & ((1 << SUBSYS_SHIFT) - 1)}"
    return f"REASON_{reason}"


# -- building and attaching the program ----------------------------------------------------------

def vmlinux_dir() -> Path:
    """A folder holding ``vmlinux.h`` of the running kernel (its BTF dumped as C by
    bpftool), in the user cache by the BTF's hash: generated once per kernel, never
    committed."""
    if not BTF.is_file():
        raise ToolMissing(f"this kernel has no BTF ({BTF}): counting drop reasons needs CONFIG_DEBUG_INFO_BTF")
    if not shutil.which("bpftool"):
        raise ToolMissing("bpftool is not installed (Debian package bpftool)")
    tag = hashlib.sha256(BTF.read_bytes()).hexdigest()[:12]
    folder = cache.folder("bpf") / f"vmlinux-{tag}"
    header = folder / "vmlinux.h"
    if not header.is_file():
        folder.mkdir(parents=True, exist_ok=True)
        tmp = header.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(sh("bpftool", "btf", "dump", "file", str(BTF), "format", "c"))
        os.replace(tmp, header)
    return folder


def program() -> Path:
    """The compiled drop counter (cached by source and kernel)."""
    return cache.bpf_object(PROGRAM, include=vmlinux_dir())


@functools.cache
def _libbpf() -> ctypes.CDLL:
    try:
        lib = ctypes.CDLL("libbpf.so.1", use_errno=True)
    except OSError:
        raise ToolMissing("libbpf is not installed (Debian package libbpf1)") from None
    ptr, text, num = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int
    for name, res, args in (("bpf_object__open_file", ptr, [text, ptr]), ("bpf_object__load", num, [ptr]),
                            ("bpf_object__find_program_by_name", ptr, [ptr, text]),
                            ("bpf_object__find_map_by_name", ptr, [ptr, text]),
                            ("bpf_program__attach", ptr, [ptr]), ("bpf_link__pin", num, [ptr, text]),
                            ("bpf_map__pin", num, [ptr, text]), ("bpf_link__destroy", num, [ptr]),
                            ("bpf_object__close", None, [ptr])):
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = res, args
    return lib


def _failed(what: str, code: int | None = None) -> RouterlabError:
    # libbpf returns -errno from calls that return an int, NULL and errno from the others
    err = -code if code is not None else ctypes.get_errno()
    return RouterlabError(f"drop counter: {what} failed: {os.strerror(err)} (libbpf's messages above say more)")


def mount(fstype: str, where: Path):
    """Mount the kernel's ``fstype`` filesystem at ``where`` unless it is there already."""
    with open("/proc/self/mounts") as fh:
        if any(line.split()[1:3] == [str(where), fstype] for line in fh):
            return
    sh("mount", "-t", fstype, fstype, str(where))


def attach(obj: Path, pins: Path):
    """Load ``obj``, attach its program to ``skb:kfree_skb`` and pin the link and the map in
    the folder ``pins``: the program stays attached until the pins are removed."""
    lib = _libbpf()
    o = lib.bpf_object__open_file(str(obj).encode(), None)
    if not o:
        raise _failed(f"opening {obj}")
    try:
        rc = lib.bpf_object__load(o)
        if rc < 0:
            raise _failed(f"loading {obj.name} (needs root and this kernel's BTF)", rc)
        rc = lib.bpf_map__pin(lib.bpf_object__find_map_by_name(o, MAP.encode()), str(pins / MAP).encode())
        if rc < 0:
            raise _failed(f"pinning the map in {pins}", rc)
        link = lib.bpf_program__attach(lib.bpf_object__find_program_by_name(o, FUNCTION.encode()))
        if not link:
            raise _failed("attaching to skb:kfree_skb")
        try:
            rc = lib.bpf_link__pin(link, str(pins / "link").encode())
            if rc < 0:
                raise _failed(f"pinning the link in {pins}", rc)
        finally:
            lib.bpf_link__destroy(link)  # only our handle: the pinned link stays attached
    finally:
        lib.bpf_object__close(o)


def detach(pins: Path):
    """Remove the pins (the link first: the program stops counting), which detaches the
    program; idempotent."""
    (pins / "link").unlink(missing_ok=True)
    shutil.rmtree(pins, ignore_errors=True)


# -- the other counters along the path ------------------------------------------------------------

#: Per-device XDP counters of veth (``ethtool -S``) kept in a reading, by their name after
#: ``rx_queue_0_`` / ``tx_queue_0_``.
VETH_COUNTERS = ("drops", "xdp_drops", "xdp_tx_errors", "xdp_xmit_errors")


def softnet() -> dict[int, tuple[int, int]]:
    """Per CPU: (dropped, time_squeeze) of /proc/net/softnet_stat, packets and times
    (machine-wide: every namespace adds to them)."""
    out = {}
    with open("/proc/net/softnet_stat") as fh:
        for i, line in enumerate(fh):
            cols = [int(x, 16) for x in line.split()]
            # column 12 (kernels >= 5.10) is the CPU's number; older kernels list CPUs in order
            out[cols[12] if len(cols) > 12 else i] = (cols[1], cols[2])
    return out


def link_drops(ns: str) -> dict[str, dict[str, int]]:
    """Device -> {rx_dropped, tx_dropped} of every device in ``ns`` (``ip -s -j link``)."""
    return {d["ifname"]: {"rx_dropped": d["stats64"]["rx"]["dropped"], "tx_dropped": d["stats64"]["tx"]["dropped"]}
            for d in json.loads(sh("ip", "-n", ns, "-s", "-j", "link", "show")) if "stats64" in d}


def veth_counters(ns: str, dev: str) -> dict[str, int]:
    """A veth's XDP and ring drop counters (:data:`VETH_COUNTERS`, ``ethtool -S``)."""
    return {k: v for k, v in veth_queue_counters(ns, dev).items() if k in VETH_COUNTERS}


def qdisc_drops(ns: str) -> dict[str, int]:
    """``<device>.<qdisc kind>`` -> packets dropped, of every qdisc in ``ns`` that keeps
    statistics (``tc -s -j qdisc``)."""
    out = {}
    for q in json.loads(sh("tc", "-n", ns, "-s", "-j", "qdisc", "show") or "[]"):
        if "drops" in q:
            key = f"{q['dev']}.{q['kind']}"
            out[key] = out.get(key, 0) + q["drops"]
    return out


# -- the counter ---------------------------------------------------------------------------------

#: A reading: (place, source, reason) -> packets. place: a namespace's role (tg, dut,
#: sink), ``nodev`` (the packet had no device any more: any namespace of the machine) or a
#: CPU (``cpu1``); source: kfree_skb, link, veth, qdisc, softnet or engine.
Reading = dict[tuple[str, str, str], int]


@dataclass
class DropCounter:
    """Counts the drops of one :class:`Testbed` while it is entered (a context manager).

    Parameters
    ----------
    tb : Testbed
        The testbed, already up (its namespaces name the places).
    engine : routerlab.engines.Engine, optional
        The router, for its own drop counters (:meth:`Engine.drop_counters`).
    """

    tb: Testbed
    engine: Engine | None = None
    names: dict[int, str] = field(default_factory=dict, repr=False)
    roles: dict[int, str] = field(default_factory=dict, repr=False)

    @property
    def pins(self) -> Path:
        return BPF_PINS / self.tb.pin_name

    def __enter__(self):
        self.names = reason_names()
        # a namespace's identity is the inode of its file: the same number as net->ns.inum
        self.roles = {os.stat(f"/run/netns/{ns}").st_ino: ns.rsplit("-", 1)[1] for ns in self.tb.namespaces}
        obj = program()
        mount("bpf", BPF_FS)  # the pins live in it
        detach(self.pins)  # what a run of the same prefix left
        self.pins.mkdir(parents=True)
        try:
            attach(obj, self.pins)
        except BaseException:
            detach(self.pins)
            raise
        return self

    def __exit__(self, *exc):
        detach(self.pins)
        return False

    def snapshot(self) -> dict[tuple[str, str], int]:
        """Packets freed as dropped since attaching: (namespace role, reason name) ->
        packets, for the testbed's own namespaces only."""
        return {(place, reason): n for (place, _, reason), n in self._traced().items() if place != "nodev"}

    def _traced(self) -> Reading:
        """The map: the testbed's namespaces by role, packets without a device as ``nodev``
        (machine-wide); other namespaces (other runs, the host) are left out."""
        out: Reading = {}
        for e in json.loads(sh("bpftool", "-j", "map", "dump", "pinned", str(self.pins / MAP))):
            inum, reason = struct.unpack("<II", bytes(int(x, 16) for x in e["key"]))
            place = "nodev" if inum == 0 else self.roles.get(inum)
            if place:
                key = (place, "kfree_skb", reason_name(reason, self.names))
                out[key] = out.get(key, 0) + int.from_bytes(bytes(int(x, 16) for x in e["value"]), "little")
        return out

    def read(self) -> Reading:
        """Every counter along the path now (:data:`Reading`); take one before and one
        after a trial and subtract (:func:`delta`)."""
        tb = self.tb
        r = self._traced()
        for ns in tb.namespaces:
            role = ns.rsplit("-", 1)[1]
            for dev, c in link_drops(ns).items():
                if tb.own_device(dev):
                    short = tb.link_name(dev)
                    r.update({(role, "link", f"{short}.{k}"): v for k, v in c.items()})
                    r.update({(role, "veth", f"{short}.{k}"): v for k, v in veth_counters(ns, dev).items()})
            r.update({(role, "qdisc", f"{tb.link_name(q)}.drops"): v for q, v in qdisc_drops(ns).items()
                      if tb.own_device(q.split(".", 1)[0])})
        for cpu, (dropped, squeezed) in softnet().items():
            r[(f"cpu{cpu}", "softnet", "dropped")] = dropped
            r[(f"cpu{cpu}", "softnet", "time_squeeze")] = squeezed
        if self.engine is not None:
            r.update({("dut", "engine", k): v for k, v in self.engine.drop_counters(tb).items()})
        return r

    def attribute(self, before: Reading, after: Reading, **trial) -> "Attribution":
        """:func:`attribute` of the counts between two readings, for this testbed's engine."""
        return attribute(delta(before, after), engine=getattr(self.engine, "name", ""), generator=self.tb.generator,
                         kernel_copy_dropped=getattr(self.engine, "kernel_copy_dropped", None),
                         untraced=getattr(self.engine, "untraced_counters", ()), **trial)


@contextlib.contextmanager
def attached(tb: Testbed, engine: Engine | None = None):
    """A :class:`DropCounter` on ``tb`` for the ``with`` block, or None where this machine
    cannot run it (no clang, bpftool, libbpf, kernel BTF or tracefs; not allowed to load
    BPF): the measurement goes on without the attribution columns, says so once (a warning
    of :mod:`logging`, on stderr),
    and the environment record says so too (``loss_attribution=off`` in its notes)."""
    try:
        # a testbed beyond one machine brings its own (routerlab.remote.sshtestbed: one per host)
        made = getattr(tb, "drop_counter", None)
        counter = (made(engine) if made else DropCounter(tb, engine)).__enter__()
    except (RouterlabError, OSError) as e:
        logging.getLogger(__name__).warning(f"routerlab: loss attribution off ({str(e).splitlines()[0]}); the "
                                            "trials are measured without it")
        yield None
        return
    try:
        yield counter
    finally:
        counter.__exit__(None, None, None)


def delta(before: Reading, after: Reading) -> Reading:
    """What each counter counted between two readings (counters that did not move are left out)."""
    return {k: v - before.get(k, 0) for k, v in after.items() if v != before.get(k, 0)}


# -- attribution ---------------------------------------------------------------------------------

#: Engines whose DUT drops the kernel's copy of every packet at nft ingress, after their
#: capture point (engines/click.py and bmv2.py ``start``): NETFILTER_DROP in the DUT, one
#: per packet that reached it. Measured: at 20k-41k pps without loss, click, fastclick and
#: bmv2 show dut NETFILTER_DROP = tx and nothing else but the sink's. fastclick-dpdk is not
#: here: its XDP program redirects the frames to AF_XDP before any sk_buff exists, and it
#: shows no DUT drop at all (measured at 20k and 300k pps).
KERNEL_COPY_DROPPED = frozenset({"click", "fastclick", "bmv2"})
#: Where each engine's firewall drops what it is meant to (a scenario with drop_share),
#: as a kfree_skb (place, reason), and the counter that bounds it. Measured with
#: ddos-drop50-fw5 (drop_share 0.5, 1 route) at 20k and 120k pps without loss: nft's
#: forward chain frees them as dut NETFILTER_DROP (= the illegitimate packets sent); the
#: XDP router's XDP_DROP comes back from veth's skb path as dut NOT_SPECIFIED (= its own
#: fw_drop counter = veth's xdp_drops), a reason veth also gives a packet refused at its
#: full XDP ring, so only fw_drop's count of them is the design.
FIREWALL_DROPS = {"nft": (("dut", "NETFILTER_DROP"), None),
                  "ebpf": (("dut", "NOT_SPECIFIED"), ("dut", "engine", "fw_drop"))}
#: Engines whose own drop counters count drops the tracepoint cannot see (user space,
#: clones, XDP frames: :data:`routerlab.engines.click.DROP_HANDLERS`, and for bmv2
#: :mod:`routerlab.engines.capture` and :func:`routerlab.engines.bmv2.queue_reads`): they
#: are loss, not context. The XDP router's counters are not here: its drops come back as
#: kfree_skb. VPP's drop its own buffers, or XDP buffers its input veth could not hand it.
UNTRACED_ENGINE_COUNTERS = frozenset({"click", "fastclick", "fastclick-dpdk", "bmv2", "vpp", "vpp-af-packet"})
#: Counters of drops that never pass kfree_skb, so the tracepoint cannot see them: XDP
#: frames are not sk_buffs, and a veth that cannot take a redirected or XDP_TX frame
#: returns it to its page pool (drivers/net/veth.c). Every other counter a reading holds
#: (link and veth drops of sk_buffs, softnet, qdiscs, the engine's) counts packets the
#: tracepoint sees as well: they are kept as context, never added.
UNTRACED_COUNTERS = frozenset({"xdp_xmit_errors", "xdp_tx_errors"})
PLACES = ("tg", "dut", "sink")
#: How the sink's counting drop frees a packet, by the testbed's generator (its sink): nft
#: ingress (rlgen's) as NETFILTER_DROP; the XDP sink's XDP_DROP of a packet that came as
#: an sk_buff as NOT_SPECIFIED (veth frees it so), and of one that came as an XDP frame
#: (an XDP router's redirect) not at all.
SINK_REASONS = {"rlgen": "NETFILTER_DROP", "xdp": "NOT_SPECIFIED"}
#: Engines that pass the XDP generator's frames on as XDP frames, never as sk_buffs: their
#: own drops and the sink's counting drop free no sk_buff.
XDP_FRAME_ENGINES = frozenset({"ebpf"})


@dataclass
class Attribution:
    """Where a trial's lost packets went. Packets, all of them.

    Attributes
    ----------
    lost : int
        tx - rx: what was offered and did not reach the sink (only the traffic meant to
        pass, when part of it is meant to be dropped).
    lost_attributed : int
        The part of ``lost`` that counters saw dropped (drops by design left out).
    lost_unexplained : int
        ``lost - lost_attributed``: lost packets no counter saw. Negative when counters saw
        more drops than packets went missing: packets of another trial (still in flight
        when this one's counters were read), packets that are not the trial's, or the
        estimate of a firewall scenario's share (see :func:`attribute`) being off.
    trace_missed : int or None
        Packets the sink counted that the drop tracer did not see (sink rx minus its
        traced counting drop): the tracer's own blind spot, measured where the truth is
        known (see the module docstring); any traced count may be short by about
        this share. None when the sink received no sk_buff to check it against (XDP
        frames into the XDP sink).
    drops : str
        The places that account for loss, most first: ``"dut:CPU_BACKLOG=123;tg:..."``.
    rows : list of tuple
        Every counter that moved: (place, source, reason, packets, counted_as), with
        counted_as ``loss`` (adds to lost_attributed), ``design`` (the testbed's own
        drops) or ``context`` (a counter of packets that a ``loss`` or ``design`` row
        counts already, or a cause such as softnet's time_squeeze).
    """

    lost: int
    lost_attributed: int
    lost_unexplained: int
    trace_missed: int | None
    drops: str
    rows: list = field(default_factory=list)


def attribute(d: Reading, *, engine: str, tx: int, rx: int, offered: int, drop_share: float = 0.0,
              generator: str = "rlgen", kernel_copy_dropped: bool | None = None,
              untraced: tuple[str, ...] = ()) -> Attribution:
    """Set the counts of one trial (:func:`delta` of two readings) against its loss.

    Drops by design are not loss: the sink counts by dropping (:data:`SINK_REASONS`, up to
    rx), the user-space engines' DUT drops the kernel's copy (:data:`KERNEL_COPY_DROPPED`)
    and a firewall scenario's firewall drops what it is meant to (:data:`FIREWALL_DROPS`).
    Every other drop in the testbed's namespaces, and the drops of the
    :data:`UNTRACED_COUNTERS` and of the engines in :data:`UNTRACED_ENGINE_COUNTERS`, is loss.

    In a firewall scenario ``lost`` counts only the legitimate packets, while a drop before
    the firewall (a full backlog) takes legitimate and illegitimate ones alike. Of the
    ``offered - tx`` illegitimate packets, those the firewall did not drop were dropped
    earlier, among the loss rows: they are subtracted when the engine's firewall drops are
    counted; otherwise the loss rows are taken at the legitimate share, 1 - drop_share.

    Parameters
    ----------
    d : Reading
        What each counter counted during the trial.
    engine : str
        The engine's name ("" for none: only the sink's drops are design).
    tx, rx : int
        Offered packets meant to pass, and packets the sink counted.
    offered : int
        Every packet offered, the ones meant to be dropped included.
    drop_share : float
        Share of the traffic the firewall is meant to drop (ratio in [0, 1)).
    generator : str
        The testbed's generator, which says how the sink's counting drop frees what it
        counts (:data:`SINK_REASONS`) and whether the frames stay XDP frames through the
        engine (:data:`XDP_FRAME_ENGINES`).
    kernel_copy_dropped : bool, optional
        Whether the DUT drops the kernel's copy of every packet it captured, for an engine
        that knows it only once configured (the ``exec`` engine:
        :func:`routerlab.engines.kernel.keep_kernel_out` unless the router forwards
        through the kernel); None: as :data:`KERNEL_COPY_DROPPED` says for ``engine``.
    untraced : tuple of str
        Prefixes of the engine's own counters that count drops the tracepoint cannot see,
        for an engine whose other counters are context (the ``exec`` engine's count of its
        router's AF_PACKET sockets' drops).
    """
    if kernel_copy_dropped is None:
        kernel_copy_dropped = engine in KERNEL_COPY_DROPPED
    traced = {(p, r): n for (p, src, r), n in d.items() if src == "kfree_skb" and p in PLACES}
    sink_reason = SINK_REASONS[generator]
    frames = generator == "xdp" and engine in XDP_FRAME_ENGINES  # never an sk_buff, sink included
    sink_traced = traced.get(("sink", sink_reason), 0)
    design = {("sink", sink_reason): min(sink_traced, rx)}
    if kernel_copy_dropped:
        design[("dut", "NETFILTER_DROP")] = traced.get(("dut", "NETFILTER_DROP"), 0)
    illegit = max(offered - tx, 0) if drop_share else 0
    firewall = None
    if illegit and engine in FIREWALL_DROPS and not kernel_copy_dropped:
        where, bound = FIREWALL_DROPS[engine]
        if frames:
            # XDP frames dropped by an XDP firewall are never sk_buffs: its own counter is
            # the only one that saw them
            firewall = min(illegit, d.get(bound, 0))
        else:
            firewall = min(traced.get(where, 0), illegit, d.get(bound, 0) if bound else illegit)
            design[where] = firewall
    rows, loss = [], {}
    for (place, source, reason), n in sorted(d.items()):
        if source == "kfree_skb" and place in PLACES:
            mine = design.get((place, reason), 0)
            if mine:
                rows.append((place, source, reason, mine, "design"))
            if n - mine:
                rows.append((place, source, reason, n - mine, "loss"))
                loss[f"{place}:{reason}"] = n - mine
        elif (source == "veth" and reason.split(".", 1)[1] in UNTRACED_COUNTERS) or \
                (source == "engine" and (engine in UNTRACED_ENGINE_COUNTERS or reason.startswith(untraced))):
            rows.append((place, source, reason, n, "loss"))
            loss[f"{place}:{reason}"] = n
        else:
            rows.append((place, source, reason, n, "context"))
    counted = sum(loss.values())
    if not illegit:
        attributed = counted
    elif firewall is not None:
        attributed = counted - (illegit - firewall)
    else:
        attributed = round(counted * (1 - drop_share))
    lost = tx - rx
    missed = None if frames else max(rx - sink_traced, 0)
    summary = ";".join(f"{k}={v}" for k, v in sorted(loss.items(), key=lambda kv: -kv[1]))
    return Attribution(lost, attributed, lost - attributed, missed, summary, rows)


def parse_summary(text) -> dict[str, int]:
    """A trial's ``drops`` summary (``place:REASON=packets;...``, as :func:`attribute`
    writes it) as {``place:REASON``: packets}; empty for no loss (an empty string or NaN)."""
    if not isinstance(text, str) or not text:
        return {}
    return {name: int(n) for name, n in (item.rsplit("=", 1) for item in text.split(";"))}


#: drops.csv, beside trials.csv: one row per counter that moved in a trial.
DROPS_FILE = "drops.csv"
DROPS_FIELDS = list(KINDS[DROPS_FILE])


def write_rows(out, experiment: str, offered_pps: float, trial: int, rows) -> None:
    """Append one trial's counters (:attr:`Attribution.rows`) to ``out/drops.csv``."""
    with TrialWriter(out, DROPS_FIELDS, DROPS_FILE) as w:
        for place, source, reason, packets, counted_as in rows:
            w.write({"experiment": experiment, "offered_pps": offered_pps, "trial": trial, "place": place,
                     "source": source, "reason": reason, "packets": packets, "counted_as": counted_as})
