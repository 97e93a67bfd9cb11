"""What this machine can do for a testbed: root and its tools, live XDP frames, the CPU
latency request and the cpuidle driver."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

from routerlab.errors import NeedsRoot

#: The kernel's PM QoS CPU latency request (Documentation/power/pm_qos_interface.rst): a
#: process that writes a 32-bit value in µs holds it until it closes the file.
CPU_LATENCY = Path("/dev/cpu_dma_latency")
#: The cpuidle driver in use ("none" without one: idle CPUs then halt whatever is asked).
CPUIDLE_DRIVER = Path("/sys/devices/system/cpu/cpuidle/current_driver")
#: Live XDP frames (BPF_F_TEST_XDP_LIVE_FRAMES) came with this kernel release.
LIVE_FRAMES_KERNEL = (5, 18)


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
    for tool, pkg in (("clang", "clang"), ("bpftool", "bpftool")):
        if not shutil.which(tool):
            return f"{tool} is not installed (Debian package {pkg})"
    if not Path("/usr/include/bpf/libbpf.h").is_file():
        return "libbpf's headers are not installed (Debian package libbpf-dev)"
    if not (shutil.which(os.environ.get("CC", "gcc")) or shutil.which("cc")):
        return "no C compiler (gcc) to build its loader"
    return None


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


