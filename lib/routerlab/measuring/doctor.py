"""``routerlab doctor``: which engines, generators and kernel features are present."""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from routerlab.engines.base import find_binary

from routerlab.engines import builds
from routerlab.errors import RouterlabError


@dataclass
class Check:
    """One line of the report: a thing, whether it is usable, its version or what is missing."""

    group: str
    name: str
    ok: bool
    detail: str
    #: Missing it fails no command routerlab's user asked for (comparison generators).
    optional: bool = False


#: Tools that are not engines themselves: name -> binary (its variable: builds.OVERRIDES);
#: bmv2-log is bmv2's logging build, which the P4 course's checks run.
EXTERNAL = {"p4c": builds.main_binary("p4c"), "bmv2-log": builds.main_binary("bmv2-log")}


def _version(cmd: list[str]) -> str:
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    out = (p.stdout or p.stderr).strip().splitlines()
    return out[0][:80] if out else ""


def _missing(err: Exception, where: str) -> str:
    # an engine that is not installed already says how to install it
    return str(err) if "engines install" in str(err) else f"{err}; get it: {where}"


def report() -> list[Check]:
    """Every check, in the order the report prints them."""
    checks = [Check("system", "root", os.geteuid() == 0,
                    "yes" if os.geteuid() == 0 else "no: the testbed needs root (sudo)")]
    for tool, pkg in (("ip", "iproute2"), ("ethtool", "ethtool"), ("nft", "nftables"), ("gcc", "gcc"), ("clang", "clang"),
                      ("bpftool", "bpftool"), ("taskset", "util-linux")):
        path = shutil.which(tool)
        flag = "-V" if tool == "ip" else "--version"
        checks.append(Check("system", tool, bool(path), _version([tool, flag]) or path if path
                            else f"missing: Debian package {pkg} (scripts/setup.sh)"))
    checks.append(Check("kernel", "release", True, os.uname().release))
    checks.append(Check("kernel", "network namespaces", os.path.exists("/proc/self/ns/net"), "/proc/self/ns/net"))
    checks.append(_cpu_latency_check())
    gre = kernel_module("ip_gre")
    # optional: routerlab's engines build GRE themselves; the kernel's is for comparison only
    checks.append(Check("kernel", "GRE module (ip_gre)", gre in ("loaded", "built in", "loadable"), gre,
                        optional=True))
    from routerlab.engines import registry

    for name in sorted(registry.names()):
        e = registry.get(name)
        try:
            e.check()
            checks.append(Check("engine", name, True, e.version()))
        except RouterlabError as err:
            checks.append(Check("engine", name, False, _missing(err, e.where)))
    for plugin, error in registry.load().items():
        checks.append(Check("plug-in", plugin, False, f"not loaded: {error}"))
    for name, binary in EXTERNAL.items():
        try:
            path = find_binary(name, binary)
            checks.append(Check("engine", name, True, builds.describe(name, path)))
        except RouterlabError as err:
            checks.append(Check("engine", name, False, _missing(err, builds.how_to_get(name))))
    from routerlab.testbed import traffic

    for group, name, what in (("generator", "rlgen", ""), ("probe", "rlstop", "the CPU-stop probe of trial validation, ")):
        try:
            checks.append(Check(group, name, True, f"{traffic.program_version(name)} ({what}built from lib/routerlab/csrc)"))
        except RouterlabError as err:
            checks.append(Check(group, name, False, str(err)))
    from routerlab.testbed.capabilities import live_frames_missing

    missing = live_frames_missing()
    if missing:
        checks.append(Check("generator", "xdp", False, f"{missing}: measurements take rlgen", optional=True))
    else:
        try:
            from routerlab.testbed import xdpgen

            checks.append(Check("generator", "xdp", True, f"{xdpgen.version()} (live XDP frames, the default)"))
        except RouterlabError as err:
            checks.append(Check("generator", "xdp", False, f"{err}: measurements take rlgen", optional=True))
    for tool, pkg in (("trafgen", "netsniff-ng"), ("tcpreplay", "tcpreplay"), ("iperf3", "iperf3")):
        path = shutil.which(tool)
        checks.append(Check("generator", tool, bool(path), (_version([tool, "--version"]) or path) if path
                            else f"missing (optional, for comparison): Debian package {pkg}",
                            optional=tool != "iperf3"))
    return checks


def kernel_module(name: str, root: Path = Path("/")) -> str:
    """Whether this machine's running kernel has module ``name`` (``ip_gre``): "loaded",
    "built in", "loadable" (a module file for this kernel release is installed), "absent"
    (this release's module lists do not name it), or "unknown" (not loaded, and no
    ``/lib/modules/<release>`` to ask, as in many containers). ``root``: the file system
    to look in (tests)."""
    if (root / "sys" / "module" / name).exists():
        return "loaded"
    base = root / "lib" / "modules" / os.uname().release

    def listed(file: str) -> bool:
        try:
            lines = (base / file).read_text().splitlines()
        except OSError:
            return False
        # entries are paths such as kernel/net/ipv4/ip_gre.ko (.ko.xz, .ko.zst when compressed)
        return any(Path(line.split(":", 1)[0].strip()).name.split(".ko")[0] == name for line in lines)

    if listed("modules.builtin"):
        return "built in"
    if listed("modules.dep"):
        return "loadable"
    return "absent" if (base / "modules.dep").is_file() else "unknown"


def _cpu_latency_check() -> Check:
    """Whether a testbed can make its idle CPUs poll (:mod:`routerlab.testbed`)."""
    from routerlab.testbed.capabilities import CPU_LATENCY, cpuidle_driver

    driver = cpuidle_driver()
    if not CPU_LATENCY.exists():
        why = "no such file"
    elif driver == "none":
        why = "no cpuidle driver, so a request changes nothing"
    elif os.geteuid() != 0:
        return Check("kernel", "CPU latency request", True,
                     f"{CPU_LATENCY}: root only, as the testbed runs (cpuidle driver: {driver})")
    elif not os.access(CPU_LATENCY, os.W_OK):
        why = "not writable"
    else:
        return Check("kernel", "CPU latency request", True,
                     f"{CPU_LATENCY}: idle CPUs poll while a testbed is up (cpuidle driver: {driver})")
    return Check("kernel", "CPU latency request", False,
                 f"{CPU_LATENCY}: {why}; idle CPUs halt during measurements (in a VM, more steal)", optional=True)
