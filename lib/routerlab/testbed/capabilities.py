"""What this machine can do for a testbed: root and its tools, live XDP frames, the CPU
latency request and the cpuidle driver."""

from __future__ import annotations

import ctypes
import functools
import os
import platform
import re
import shutil
import struct
from pathlib import Path

from routerlab.errors import NeedsRoot

#: The kernel's PM QoS CPU latency request (Documentation/power/pm_qos_interface.rst): a
#: process that writes a 32-bit value in µs holds it until it closes the file.
CPU_LATENCY = Path("/dev/cpu_dma_latency")
#: The cpuidle driver in use ("none" without one: idle CPUs then halt whatever is asked).
CPUIDLE_DRIVER = Path("/sys/devices/system/cpu/cpuidle/current_driver")
#: Live XDP frames (BPF_F_TEST_XDP_LIVE_FRAMES) came with this kernel release.
LIVE_FRAMES_KERNEL = (5, 18)
#: The bpf() system call's number on the architectures routerlab knows (asm/unistd.h).
_SYS_BPF = {"x86_64": 321, "aarch64": 280, "riscv64": 280, "ppc64le": 361, "s390x": 351}


_told: set[str] = set()


def runnable(generator: str) -> str:
    """``generator``, or rlgen where the XDP generator cannot run here
    (:func:`live_frames_missing`), said once per process (a warning of :mod:`logging`, on
    stderr)."""
    if generator != "xdp":
        return generator
    missing = live_frames_missing()
    if not missing:
        return generator
    if missing not in _told:
        import logging

        _told.add(missing)
        logging.getLogger(__name__).warning(f"routerlab: the XDP generator cannot run here ({missing}): "
                                            "measuring with rlgen")
    return "rlgen"


def live_frames_missing() -> str | None:
    """What this machine lacks to run the XDP generator and sink, in a few words; None
    when nothing is missing."""
    release = os.uname().release
    m = re.match(r"(\d+)\.(\d+)", release)
    if not m or (int(m.group(1)), int(m.group(2))) < LIVE_FRAMES_KERNEL:
        return f"live XDP frames need kernel {'.'.join(map(str, LIVE_FRAMES_KERNEL))} or later, this is {release}"
    refused = live_frames_refused()
    if refused:
        return refused
    for tool, pkg in (("clang", "clang"), ("bpftool", "bpftool")):
        if not shutil.which(tool):
            return f"{tool} is not installed (Debian package {pkg})"
    if not Path("/usr/include/bpf/libbpf.h").is_file():
        return "libbpf's headers are not installed (Debian package libbpf-dev)"
    if not (shutil.which(os.environ.get("CC", "gcc")) or shutil.which("cc")):
        return "no C compiler (gcc) to build its loader"
    return None


@functools.cache
def live_frames_refused() -> str | None:
    """Why this kernel refuses BPF_PROG_RUN with live frames, in a few words; None when it
    runs them, or when this process cannot tell (without root it may load no program, and
    a kernel that runs none at all says nothing of live frames). A kernel of the right
    release may still refuse them (seen: EPERM from a kernel that runs the same program
    without the flag). Told by trying, once per process: a program that drops every
    frame (XDP_DROP: nothing reaches any interface) is loaded and run on a frame of zeros,
    without live frames and then with them."""
    nr = _SYS_BPF.get(platform.machine())
    if nr is None:
        return None
    libc = ctypes.CDLL(None, use_errno=True)

    def bpf(cmd: int, attr: bytes) -> tuple[int, int]:
        buf = ctypes.create_string_buffer(attr, 128)  # union bpf_attr, zero beyond attr
        return libc.syscall(nr, cmd, buf, len(buf)), ctypes.get_errno()

    xdp_drop = struct.pack("<BBhi", 0xB7, 0, 0, 1) + struct.pack("<BBhi", 0x95, 0, 0, 0)  # r0 = 1; exit
    insns, license_ = ctypes.create_string_buffer(xdp_drop), ctypes.create_string_buffer(b"GPL")
    # BPF_PROG_LOAD (5): prog_type XDP (6), insn_cnt, insns, license
    fd, _ = bpf(5, struct.pack("<IIQQ", 6, 2, ctypes.addressof(insns), ctypes.addressof(license_)))
    if fd < 0:
        return None
    try:
        frame = ctypes.create_string_buffer(64)

        def run(flags: int) -> tuple[int, int]:
            # BPF_PROG_TEST_RUN (10): prog_fd, retval, data_size_in, data_size_out, data_in,
            # data_out, repeat, duration, ctx sizes and pointers, flags (live frames: 1 << 1)
            return bpf(10, struct.pack("<IIIIQQIIIIQQI", fd, 0, 60, 0, ctypes.addressof(frame), 0, 1, 0, 0, 0, 0, 0,
                                       flags))

        if run(0)[0] != 0:
            return None
        rc, err = run(1 << 1)
    finally:
        os.close(fd)
    if rc == 0:
        return None
    return f"this kernel refuses BPF_PROG_RUN with live frames: {os.strerror(err)}"


def cpu_latency_us() -> int | None:
    """The CPU latency the kernel honours now (the smallest request held), µs; None where
    it cannot be read."""
    try:
        with open(CPU_LATENCY, "rb") as fh:
            return int.from_bytes(fh.read(4), "little", signed=True)
    except OSError:
        return None


def cpuidle_driver() -> str:
    """The cpuidle driver the kernel uses ("none" where it has none or cannot say)."""
    try:
        return CPUIDLE_DRIVER.read_text().strip() or "none"
    except OSError:
        return "none"


def require_root(settings=None):
    """Raise :class:`NeedsRoot` (one clear line) unless running as root (here: a testbed
    beyond one machine, made by ``settings``' factory
    (:class:`routerlab.testbed.settings.Settings`), needs root on its hosts, where its
    agents check it)."""
    if settings is not None and settings.beyond_one_machine:
        return
    if os.geteuid() != 0:
        raise NeedsRoot("the testbed needs root (network namespaces, veth, nftables): run with sudo")
    for tool, pkg in (("ip", "iproute2"), ("ethtool", "ethtool")):
        if not shutil.which(tool):
            raise NeedsRoot(f"{pkg} ('{tool}') is not installed: run scripts/setup.sh")


