"""Where lost packets went: every drop along the testbed's path, by the counter that took it.

The kernel names each packet it frees as dropped with a reason (tracepoint
``skb:kfree_skb``: CPU_BACKLOG, NETFILTER_DROP, QDISC_DROP, FULL_RING, ...), which is how
pwru and retis find where packets die. :class:`DropCounter` attaches a small BPF program
(``bpf/drop_reasons.c``) to that tracepoint for the life of one :class:`Testbed`; it counts
per (network namespace, reason), and :meth:`DropCounter.snapshot` keeps the testbed's own
namespaces by their role (tg, dut, sink). Around each trial :meth:`DropCounter.read` also
takes the counters that see drops the tracepoint cannot (XDP frames are not socket
buffers: a full veth ring returns them without ``kfree_skb``) or that say why (softnet
squeezes): each veth's link and XDP counters, the testbed's qdiscs, the per-CPU softnet
counters (global: every namespace of the machine adds to them) and the engine's own.

:func:`attribute` sets them against the trial's loss (``lost = tx - rx``), leaving out the
drops that are the testbed's design, not loss (:func:`by_design`).

Loading: bpftool 7.1 (Debian bookworm) has no ``autoattach``, so the program is loaded and
attached with Debian's libbpf (``libbpf.so.1``, through ctypes) and its link and map are
pinned under ``/sys/fs/bpf/routerlab/<prefix>``. Removing the pins detaches it, and
``routerlab clean`` removes the pins a killed run left (:func:`routerlab.testbed.clean`).
The bpf filesystem is mounted at ``/sys/fs/bpf`` when it is not (what systemd does at
boot); it stays mounted.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import json
import os
import re
import shutil
import struct
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from .engines.ebpf import compile_bpf
from .errors import RouterlabError, ToolMissing
from .testbed import BPF_PINS, Testbed, sh

#: Where the tracepoint's format is read, in order (tracefs, then its debugfs mount).
FORMAT_FILES = (Path("/sys/kernel/tracing/events/skb/kfree_skb/format"),
                Path("/sys/kernel/debug/tracing/events/skb/kfree_skb/format"))
BTF = Path("/sys/kernel/btf/vmlinux")
BPF_FS = BPF_PINS.parent
#: The program (lib/routerlab/bpf/<name>.c), its function and its map.
PROGRAM, FUNCTION, MAP = "drop_reasons", "rl_kfree_skb", "rl_drops"
#: Drop reasons above this are a subsystem's own (SKB_DROP_REASON_SUBSYS_SHIFT).
SUBSYS_SHIFT = 16


# -- reason names ------------------------------------------------------------------------------

def tracepoint_format() -> str:
    """The text of ``skb:kfree_skb``'s format file (tracefs)."""
    for f in FORMAT_FILES:
        if f.is_file():
            return f.read_text()
    raise ToolMissing(f"no tracefs: {FORMAT_FILES[0]} is missing (mount -t tracefs tracefs /sys/kernel/tracing)")


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
    folder = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "routerlab" / "bpf" / f"vmlinux-{tag}"
    header = folder / "vmlinux.h"
    if not header.is_file():
        folder.mkdir(parents=True, exist_ok=True)
        tmp = header.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(sh("bpftool", "btf", "dump", "file", str(BTF), "format", "c"))
        os.replace(tmp, header)
    return folder


def program() -> Path:
    """The compiled drop counter (cached by source and kernel)."""
    return compile_bpf(PROGRAM, include=vmlinux_dir())


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


def mount_bpffs():
    """Mount the bpf filesystem at /sys/fs/bpf unless it is there (pins live in it)."""
    with open("/proc/self/mounts") as fh:
        if any(line.split()[1:3] == [str(BPF_FS), "bpf"] for line in fh):
            return
    sh("mount", "-t", "bpf", "bpf", str(BPF_FS))


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
    out = {}
    for line in sh("ip", "netns", "exec", ns, "ethtool", "-S", dev).splitlines():
        m = re.match(r"\s*(?:rx|tx)_queue_\d+_(\w+):\s*(\d+)", line)
        if m and m.group(1) in VETH_COUNTERS:
            out[m.group(1)] = out.get(m.group(1), 0) + int(m.group(2))
    return out


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
    engine: object | None = None
    names: dict[int, str] = field(default_factory=dict, repr=False)
    roles: dict[int, str] = field(default_factory=dict, repr=False)

    @property
    def pins(self) -> Path:
        return BPF_PINS / self.tb.prefix

    def __enter__(self):
        self.names = reason_names()
        # a namespace's identity is the inode of its file: the same number as net->ns.inum
        self.roles = {os.stat(f"/run/netns/{ns}").st_ino: ns.rsplit("-", 1)[1] for ns in self.tb.namespaces}
        obj = program()
        mount_bpffs()
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
        out: dict[tuple[str, str], int] = {}
        for (inum, reason), n in self._entries():
            if inum in self.roles:
                key = (self.roles[inum], reason_name(reason, self.names))
                out[key] = out.get(key, 0) + n
        return out

    def _entries(self):
        raw = json.loads(sh("bpftool", "-j", "map", "dump", "pinned", str(self.pins / MAP)))
        for e in raw:
            inum, reason = struct.unpack("<II", bytes(int(x, 16) for x in e["key"]))
            yield (inum, reason), int.from_bytes(bytes(int(x, 16) for x in e["value"]), "little")

    def nodev(self) -> dict[str, int]:
        """Drops of packets without a device, by reason: machine-wide, not attributable to
        a namespace."""
        out: dict[str, int] = {}
        for (inum, reason), n in self._entries():
            if inum == 0:
                out[reason_name(reason, self.names)] = out.get(reason_name(reason, self.names), 0) + n
        return out

    def read(self) -> Reading:
        """Every counter along the path now (:data:`Reading`); take one before and one
        after a trial and subtract (:func:`delta`)."""
        tb = self.tb
        r: Reading = {(role, "kfree_skb", reason): n for (role, reason), n in self.snapshot().items()}
        r.update({("nodev", "kfree_skb", reason): n for reason, n in self.nodev().items()})
        for ns in tb.namespaces:
            role = ns.rsplit("-", 1)[1]
            for dev, c in link_drops(ns).items():
                if dev.startswith(tb.prefix):
                    short = dev.removeprefix(tb.prefix)
                    r.update({(role, "link", f"{short}.{k}"): v for k, v in c.items()})
                    r.update({(role, "veth", f"{short}.{k}"): v for k, v in veth_counters(ns, dev).items()})
            r.update({(role, "qdisc", f"{q.removeprefix(tb.prefix)}.drops"): v for q, v in qdisc_drops(ns).items()})
        for cpu, (dropped, squeezed) in softnet().items():
            r[(f"cpu{cpu}", "softnet", "dropped")] = dropped
            r[(f"cpu{cpu}", "softnet", "time_squeeze")] = squeezed
        if self.engine is not None:
            r.update({("dut", "engine", k): v for k, v in self.engine.drop_counters(tb).items()})
        return r


def delta(before: Reading, after: Reading) -> Reading:
    """What each counter counted between two readings (counters that did not move are left out)."""
    return {k: v - before.get(k, 0) for k, v in after.items() if v != before.get(k, 0)}
