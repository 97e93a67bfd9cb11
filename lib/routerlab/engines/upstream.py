"""The engines' own test suites, run against routerlab's installs (``routerlab engines test``).

A suite runs from the engine's pinned source tree, the tarball ``engines install`` builds
from (GitHub, or ``$ROUTERLAB_ENGINE_SOURCES``), unpacked once into the user cache, against
the installed binaries (``engines install``'s prefix), as a researcher checking a build
would run it. Click's and FastClick's suite is ``test/clicktest`` over ``test/``: each test
file states its requirements (``%require``) and the harness skips a test whose requirement
fails.

Every test ends as one of:

- ``passed``;
- ``skipped``: its own ``%require`` failed (a feature the build leaves out by design, such as
  Click's Linux kernel module, or multithreading);
- ``expected``: it failed for a reason upstream knows or this install cannot change,
  named in :data:`EXPECTED` (by the failure's text) or :data:`KNOWN` (by test), never
  counted as a failure;
- ``failed``: anything else, with the harness's lines about it.

Three things of the harness are set right before it runs, so that its tests test the
engine and not the harness: a ``not`` command on its PATH (FastClick's tests require
``not click-buildtool provides dpdk-packet``, which a shell runs as a command named
``not``), a ``click-provides`` command (FastClick's tests require ``click-provides
!FEATURE``, a tool it does not ship: ours asks ``click-buildtool provides``), and
``CLICKPATH`` set to the install's ``share/click`` (where the tools find their element
map), the default search path after it. The tools a suite's scripts call (``nc``, ``tcpdump``) are Debian
packages (:data:`SUITE_DEBIAN`), installed like a build's.

p4c's suite is its CTest suite ``bmv2`` (:func:`p4c_bmv2`): each program of
``BMV2_V1MODEL_TEST_SUITES`` in ``backends/bmv2/CMakeLists.txt`` through
``backends/bmv2/run-bmv2-test.py``, which compiles it with routerlab's ``p4c-bm2-ss`` and
runs its STF test (``empty.stf`` where it has none) on routerlab's ``simple_switch``. The
harness runs in a virtual environment of its own with the versions p4c's
``requirements.txt`` pins (scapy 2.4.5 among them: newer ones break it), each test in a
network namespace of its own (the switch's Thrift port is on its loopback). A program
upstream lists in ``XFAIL_TESTS`` is ``expected`` to fail, with upstream's comment as why.
``extern-funcs-bmv2.p4`` runs as upstream's ``bmv2_emit_externs`` test runs it: with
``--emit-externs`` and its extern module, built (as upstream's ``make
extern_func_module``) against the headers of routerlab's bmv2.

VPP's suite is its own runner, ``test/run_tests.py`` (:func:`vpp_tests`), over the files of
what routerlab uses (:data:`VPP_TESTS`: IPv4 forwarding, the ACL plug-in, af_packet and
af_xdp interfaces routing between network namespaces), against the install's ``bin/vpp``,
plug-ins and API files, in network and PID namespaces of their own. Its Python runs in a
virtual environment made as ``test/Makefile`` makes it: ``test/requirements-3.txt``,
upstream's patches of scapy, and ``vpp_papi`` from the source tree; ``tshark`` and
``iperf3`` are Debian packages. The plug-ins the install leaves out are the runner's
``--excluded-plugin``s, so the tests that need them skip. A small driver
(:data:`VPP_DRIVER`) runs the runner unchanged and records each test's outcome by name; it
drops ``api-fuzz { off }`` from VPP's command line (a section of the unittest plug-in,
which routerlab does not build; off is VPP's default), and it runs the af_packet and af_xdp
tests upstream skips on Debian 12 (``@tag_fixme_debian12``, for intermittent failures):
one of those that fails is ``expected`` with that reason. Tests upstream marks extended
skip, as in its default run, and a test needing more CPUs than the machine has skips (the
runner's rule); the report names each skipped test with why. A failure is ``expected``
when its text matches :data:`VPP_EXPECTED` (a ``test ...`` command of the unittest
plug-in; upstream's path-MTU listing that refuses VPP's "retry with cursor" answer).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from routerlab import cache, processes
from routerlab.errors import ParameterError, RouterlabError
from routerlab.engines import builds

#: The engines that have a suite here, and what it is.
SUITES = {"click": "test/clicktest", "fastclick": "test/clicktest", "p4c": "bmv2 (backends/bmv2/run-bmv2-test.py)",
          "vpp": "test/run_tests.py"}
#: Debian packages the suites' scripts call: netcat (ControlSocket tests), tcpdump.
SUITE_DEBIAN = {"click": ["perl", "netcat-openbsd", "tcpdump"], "fastclick": ["perl", "netcat-openbsd", "tcpdump"],
                "p4c": ["python3-venv"], "vpp": ["python3-venv", "patch", "tshark", "iperf3", "iproute2"]}
#: The Python packages of p4c's requirements.txt its bmv2 harness imports (their pinned versions are read there).
P4C_HARNESS_NEEDS = ("scapy", "ply")
#: Seconds one p4c test (compile and STF run) may take; the harness's own limit is ten minutes.
P4C_TEST_TIMEOUT_S = 300
#: The program upstream's CMake runs with arguments of its own (``p4c_add_test_with_args``
#: "bmv2_emit_externs"), and the C++ source of the extern module it loads.
P4C_EXTERNS = ("p4_16_samples/extern-funcs-bmv2.p4", "extern_modules/extern-funcs-bmv2.cpp")
#: Failures whose text names a reason that is not the engine's: (pattern, the reason).
EXPECTED = (
    (r"click-install: not found|click-uninstall: not found",
     "needs click-install: Click's Linux kernel module, which routerlab does not build"),
)
#: Failures of named tests that routerlab's install cannot pass, and why: engine -> test -> reason.
KNOWN = {
    "click": {
        "userlevel/ControlSocket-llrpc-01.clicktest":
            "upstream: the script waits for the file PORT to exist, not for Click to have written the "
            "port into it (`while [ ! -f PORT ]`), so on a busy machine `nc` gets an empty port "
            "(\"nc: missing port number\"); it passes at other times",
        "userlevel/McastSocket-01.clicktest":
            "not explained: now and then, even with its two Click instances run alone, one instance's "
            "bind of 233.252.0.0:1234 is refused (\"bind: Address already in use\") although both set "
            "SO_REUSEADDR; it passes at other times",
    },
    "fastclick": {
        "userlevel/uhotswap-01.clicktest":
            "upstream: FastClick's hot-swap sometimes refuses the old configuration's state "
            "(\"already initialized, can't take state\") and the test waits out its timeout; it passes "
            "at other times, and Click passes it",
        "standard/perf-01.clicktest":
            "upstream's requirement runs `time` with no command, which only bash accepts (a keyword "
            "there); the harness's /bin/sh is dash here, where `time` is a program that needs one",
    },
}
#: Seconds a test may run (the harness's own default is 45).
TEST_TIMEOUT_S = 45
#: Seconds the harness may take over one test file before it is stopped, its test failed.
HARNESS_TIMEOUT_S = TEST_TIMEOUT_S + 30


@dataclass
class TestResult:
    """One upstream test's outcome: ``passed``, ``skipped``, ``expected`` or ``failed``;
    ``why``: the requirement that skipped it, or the reason of an expected failure;
    ``lines``: what the harness said of a failure."""

    name: str
    outcome: str
    why: str = ""
    lines: list[str] = field(default_factory=list)
    seconds: float = 0.0


@dataclass
class SuiteRun:
    """One suite's run on one engine's install."""

    engine: str
    suite: str
    results: list[TestResult]
    seconds: float
    #: Whether the report names each skipped test with why (VPP's: a test upstream's runner
    #: skips cannot run here, and the reason is the line that says so).
    list_skipped: bool = False

    def count(self, outcome: str) -> int:
        return sum(r.outcome == outcome for r in self.results)

    @property
    def ok(self) -> bool:
        """No test failed for a reason not named."""
        return not self.count("failed")


def source_tree(engine: str, say: Callable[[str], None] = lambda s: None) -> Path:
    """The engine's pinned source tree, unpacked (once) under the user cache."""
    r = builds.recipe(engine)
    top = cache.folder("sources") / f"{engine}-{r.source.commit[:12]}"
    done = top / ".unpacked"
    if not done.is_file():
        tarball, origin = builds.fetch(r.source)
        say(f"{engine}: unpacking {r.source.short} from {origin}")
        shutil.rmtree(top, ignore_errors=True)
        part = top.with_name(top.name + ".part")
        shutil.rmtree(part, ignore_errors=True)
        builds._unpack(tarball, part)
        os.replace(part, top)
        done.write_text(r.source.commit + "\n")
    return top


def clicktest(engine: str, tests: list[str] | None = None, *, say: Callable[[str], None] = lambda s: None) -> SuiteRun:
    """Run Click's harness (``test/clicktest``) of ``engine`` (click or fastclick) against
    its install, over ``tests`` (paths under ``test/``, default all of them)."""
    prefix = builds.installed(engine)
    if prefix is None:
        raise RouterlabError(f"{engine} is not installed: routerlab engines install {engine}")
    suite_tools(engine, say)
    src = source_tree(engine, say)
    testdir = src / "test"
    names = tests or sorted(str(p.relative_to(testdir)) for p in testdir.rglob("*.clicktest"))
    unknown = [t for t in names if not (testdir / t).is_file()]
    if unknown:
        raise ParameterError("test", f"no such test in {engine}'s test/: {', '.join(unknown)}")
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="routerlab-clicktest-") as tmp:
        helpers = Path(tmp) / "bin"
        helpers.mkdir()
        (helpers / "not").write_text('#!/bin/sh\n! "$@"\n')
        # FastClick's tests require `click-provides [!]FEATURE`, a tool FastClick does not ship
        (helpers / "click-provides").write_text(
            '#!/bin/sh\nfor f in "$@"; do case "$f" in\n'
            '  !*) ! click-buildtool provides "${f#!}" || exit 1;;\n'
            '  *) click-buildtool provides "$f" || exit 1;;\nesac; done\n')
        for h in helpers.iterdir():
            h.chmod(0o755)
        # a trailing colon keeps the default search path after it (Click's CLICKPATH rule)
        env = {**os.environ, "CLICKPATH": f"{prefix / 'share' / 'click'}:", "LC_ALL": "C"}
        say(f"{engine}: {len(names)} tests of test/clicktest against {prefix}")
        # one file per run of the harness: its report of a file is then that file's alone
        results = []
        for i, name in enumerate(names, 1):
            t = time.monotonic()
            results.append(_run_one(engine, name, ["perl", str(testdir / "clicktest"), "-V", "-t", str(TEST_TIMEOUT_S),
                                                   "-p", str(prefix / "bin"), "-p", str(helpers), name],
                                    testdir, env))
            results[-1].seconds = round(time.monotonic() - t, 2)
            if i % 25 == 0:
                say(f"{engine}: {i} of {len(names)} tests run")
    return SuiteRun(engine, SUITES[engine], results, time.monotonic() - t0)


def _run_one(engine: str, name: str, cmd: list[str], cwd: Path, env: dict) -> TestResult:
    """One test file through the harness, in a process group of its own: a harness that
    outlives its own timeout, or Ctrl-C, takes the engines it started with it."""
    p = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         start_new_session=True)
    try:
        out, _ = p.communicate(timeout=HARNESS_TIMEOUT_S)
        return judge(engine, name, out)
    except subprocess.TimeoutExpired:
        return TestResult(name, "failed", "", [f"the harness did not end within {HARNESS_TIMEOUT_S} s"])
    finally:
        if p.poll() is None:
            _end_group(p)
            p.communicate()


def _end_group(p: subprocess.Popen):
    """Kill a harness's process group (with the p4c suite's, its namespaces' processes go with it)."""
    if p.poll() is None:
        processes.signal_group(p.pid, signal.SIGKILL, gone=(ProcessLookupError,))


def judge(engine: str, name: str, output: str) -> TestResult:
    """One test's outcome from what ``clicktest -V`` printed for it alone."""
    lines = [ln for ln in output.splitlines() if ln.strip() and not ln.startswith("clicktest:")]
    text = "\n".join(lines)
    if re.search(r": Success!$", text, re.M):
        return TestResult(name, "passed")
    req = re.search(r"requirement failure at '(.*)'", text)
    if req:
        return TestResult(name, "skipped", f"requires {req.group(1)}")
    said = [re.sub(r"^\S+?\.clicktest:", "", ln) for ln in lines if "Running..." not in ln]
    for pattern, why in EXPECTED:
        if re.search(pattern, text):
            return TestResult(name, "expected", why, said)
    if name in KNOWN.get(engine, {}):
        return TestResult(name, "expected", KNOWN[engine][name], said)
    return TestResult(name, "failed", "", said or ["(no output)"])


def run(engines: list[str], *, tests: list[str] | None = None, say: Callable[[str], None] = lambda s: None) -> list[SuiteRun]:
    """The suites of ``engines`` (each must have one: :data:`SUITES`), each installing its
    tools first (:func:`suite_tools`)."""
    unknown = [e for e in engines if e not in SUITES]
    if unknown:
        raise ParameterError("engine", f"no upstream suite here for {', '.join(unknown)}; suites: {', '.join(SUITES)}")
    suites = {"p4c": p4c_bmv2, "vpp": vpp_tests}
    return [suites[e](tests, say=say) if e in suites else clicktest(e, tests, say=say) for e in engines]


def suite_tools(engine: str, say: Callable[[str], None]) -> None:
    """Install the Debian packages the suite of ``engine`` calls (:data:`SUITE_DEBIAN`) that
    are missing: VPP's harness, for one, imports ``tshark`` as a command at its start."""
    builds.install_debian(SUITE_DEBIAN[engine], say, f"tools of {engine}'s test suite")


# -- p4c ---------------------------------------------------------------------------------------

def p4c_tests(src: Path) -> list[str]:
    """The programs of p4c's CTest suite ``bmv2`` (``BMV2_V1MODEL_TEST_SUITES`` of
    ``backends/bmv2/CMakeLists.txt``), as paths under ``testdata/``: its globs, and the
    ``p4_16_samples/*-bmv2.p4`` that include ``v1model.p4``."""
    data = src / "testdata"
    globs = ["p4_16_bmv_errors/*-bmv2.p4", "p4_16_samples/dash/*-bmv2.p4", "p4_16_samples/fabric_*/fabric.p4",
             "p4_16_samples/omec/*.p4", "p4_16_samples/pins/*.p4", "p4_14_samples/switch_*/switch.p4",
             "p4_14_samples/*.p4"]
    found = {p for g in globs for p in data.glob(g)}
    found |= {p for p in data.glob("p4_16_samples/*-bmv2.p4")
              if re.search(r"include.*v1model.p4", p.read_text(errors="replace"))}
    return sorted(str(p.relative_to(data)) for p in found)


def p4c_xfail(src: Path) -> dict[str, str]:
    """p4c's ``XFAIL_TESTS`` of ``backends/bmv2/CMakeLists.txt``: path under ``testdata/``
    -> upstream's comment above it."""
    path = src / "backends" / "bmv2" / "CMakeLists.txt"
    m = re.search(r"set\s*\(\s*XFAIL_TESTS\s*\n(.*?)\n\s*\)", path.read_text(), re.S)
    if m is None:
        from routerlab.errors import DataFormatError

        raise DataFormatError(str(path), None, "no set (XFAIL_TESTS ...): upstream's expected failures cannot be told")
    out, why, after_test = {}, [], True
    for line in m.group(1).splitlines():
        line = line.strip()
        if line.startswith("#"):  # a comment starts anew after a test, else goes on
            why = ([] if after_test else why) + [line.lstrip("# ")]
            after_test = False
        elif line:
            out[line.removeprefix("testdata/")] = "upstream's XFAIL_TESTS: " + " ".join(why)
            after_test = True
    return out


def harness_python(src: Path, say: Callable[[str], None] = lambda s: None) -> Path:
    """The Python of a virtual environment with the versions of :data:`P4C_HARNESS_NEEDS`
    that p4c's ``requirements.txt`` pins, made once under the user cache."""
    pins = []
    for line in (src / "requirements.txt").read_text().splitlines():
        m = re.match(r"\s*([A-Za-z0-9_.-]+)==([^\s;#]+)", line)
        if m and m.group(1).lower() in P4C_HARNESS_NEEDS:
            pins.append(f"{m.group(1)}=={m.group(2)}")
    if len(pins) != len(P4C_HARNESS_NEEDS):
        raise RouterlabError(f"{src / 'requirements.txt'}: expected pins of {', '.join(P4C_HARNESS_NEEDS)}, "
                             f"found {', '.join(pins) or 'none'}")
    venv = cache.folder("harness") / ("p4c-" + "-".join(sorted(pins)).replace("==", ""))
    python = venv / "bin" / "python"
    if not (venv / ".ready").is_file():
        say(f"p4c: a virtual environment for its harness with {', '.join(pins)}")
        shutil.rmtree(venv, ignore_errors=True)
        for cmd in ([sys.executable, "-m", "venv", str(venv)], [str(python), "-m", "pip", "install", "-q", *pins]):
            p = subprocess.run(cmd, capture_output=True, text=True)
            if p.returncode:
                shutil.rmtree(venv, ignore_errors=True)
                raise RouterlabError(f"{' '.join(cmd[:4])}...: {(p.stderr or p.stdout).strip()[-400:]}")
        (venv / ".ready").write_text("\n".join(pins) + "\n")
    return python


def _own_network() -> list[str]:
    """A command prefix that runs a command in network and PID namespaces of its own,
    loopback up (as a user, in a user namespace of its own too): killing the prefix's
    process (its parent's death does) ends every process the command started."""
    user = [] if os.geteuid() == 0 else ["--user", "--map-root-user"]
    return ["setpriv", "--pdeathsig", "KILL", "unshare", *user, "--net", "--pid", "--fork", "--kill-child",
            "sh", "-c", 'ip link set lo up && exec "$@"', "sh"]


def p4c_bmv2(tests: list[str] | None = None, *, say: Callable[[str], None] = lambda s: None,
             jobs: int | None = None) -> SuiteRun:
    """p4c's CTest suite ``bmv2`` (:func:`p4c_tests`, or ``tests``: paths under
    ``testdata/``) with routerlab's p4c and bmv2 (the measured build), ``jobs`` at a time
    (default: one per CPU)."""
    from concurrent.futures import ThreadPoolExecutor

    p4c_prefix, bmv2_prefix = builds.installed("p4c"), builds.installed("bmv2")
    for name, prefix in (("p4c", p4c_prefix), ("bmv2", bmv2_prefix)):
        if prefix is None:
            raise RouterlabError(f"{name} is not installed: routerlab engines install {name}")
    suite_tools("p4c", say)
    src = source_tree("p4c", say)
    names = tests or p4c_tests(src)
    unknown = [t for t in names if not (src / "testdata" / t).is_file()]
    if unknown:
        raise ParameterError("test", f"no such program in p4c's testdata/: {', '.join(unknown)}")
    xfail = p4c_xfail(src)
    python = harness_python(src, say)
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="routerlab-p4c-") as tmp:
        # the harness's "build folder": its compiler, its config.h, and (found by walking
        # up from where it runs) a folder named behavioral-model holding the switch
        build = Path(tmp)
        (build / "behavioral-model").mkdir()
        (build / "p4c-bm2-ss").symlink_to(p4c_prefix / "bin" / "p4c-bm2-ss")
        for b in ("simple_switch", "simple_switch_CLI"):
            (build / "behavioral-model" / b).symlink_to(bmv2_prefix / "bin" / b)
        (build / "config.h").write_text("#define HAVE_SIMPLE_SWITCH 1\n")
        driver = src / "backends" / "bmv2" / "run-bmv2-test.py"
        extra = {}
        if P4C_EXTERNS[0] in names:
            module = build / "libextern_func_module.so"
            made = subprocess.run(["g++", "-shared", "-fPIC", "-O1", "-std=c++17", f"-I{bmv2_prefix / 'include'}",
                                   "-o", str(module), str(src / "testdata" / P4C_EXTERNS[1])],
                                  capture_output=True, text=True)
            extra[P4C_EXTERNS[0]] = ["-a=--emit-externs", f"--target-specific-switch-arg=--load-modules {module}"] \
                if made.returncode == 0 else ["-a=--emit-externs", "--init=false"]  # fails, said below
            if made.returncode:
                say(f"p4c: the extern module of {P4C_EXTERNS[0]} did not build: {made.stderr.strip()[-300:]}")
        say(f"p4c: {len(names)} programs of its bmv2 suite against {p4c_prefix} and {bmv2_prefix}")
        done = []

        def one(name: str) -> TestResult:
            t = time.monotonic()
            cmd = _own_network() + [str(python), str(driver), str(src), str(src / "testdata" / name), "-bd", str(build),
                                    *extra.get(name, [])]
            r = _p4c_one(name, cmd, build, xfail)
            r.seconds = round(time.monotonic() - t, 2)
            done.append(name)
            if len(done) % 50 == 0:
                say(f"p4c: {len(done)} of {len(names)} programs run")
            return r

        pool = ThreadPoolExecutor(max_workers=jobs or os.cpu_count() or 1)
        try:
            results = list(pool.map(one, names))
        except BaseException:
            # Ctrl-C reaches this thread only: stop the queue, end the harnesses running
            pool.shutdown(wait=False, cancel_futures=True)
            for p in list(_RUNNING):
                _end_group(p)
            raise
        finally:
            pool.shutdown(wait=True)
    return SuiteRun("p4c", SUITES["p4c"], results, time.monotonic() - t0)


#: The p4c harnesses running now (:func:`_p4c_one`), for Ctrl-C to end.
_RUNNING: set = set()


def _harness(cmd: list[str], cwd: Path, timeout: float) -> tuple[int | None, str]:
    """Run a harness in a process group of its own (ended with it, and on Ctrl-C through
    :data:`_RUNNING`): its exit status (None if it did not end within ``timeout``
    seconds) and its output."""
    p = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         start_new_session=True)
    _RUNNING.add(p)
    try:
        out, _ = p.communicate(timeout=timeout)
        return p.returncode, out
    except subprocess.TimeoutExpired:
        _end_group(p)
        return None, p.communicate()[0]
    finally:
        _end_group(p)
        _RUNNING.discard(p)


def _p4c_one(name: str, cmd: list[str], cwd: Path, xfail: dict[str, str]) -> TestResult:
    """One program through p4c's harness: exit 0 passes; a failure is expected when
    upstream lists the program in ``XFAIL_TESTS``."""
    code, out = _harness(cmd, cwd, P4C_TEST_TIMEOUT_S)
    if code is None:
        # as for CTest, a timeout fails a test upstream expects to fail too
        return TestResult(name, "failed", "", [f"the harness did not end within {P4C_TEST_TIMEOUT_S} s"])
    if code == 0:
        # upstream's XFAIL that passes is, for CTest, a failure: "unexpectedly passed"
        return TestResult(name, "failed", "", ["passed, but upstream lists it in XFAIL_TESTS"]) if name in xfail \
            else TestResult(name, "passed")
    said = [ln for ln in out.splitlines() if re.search(r"error|\*\*\*|ERROR|Traceback|expected|Error", ln)][-6:]
    if name in xfail:
        return TestResult(name, "expected", xfail[name], said)
    return TestResult(name, "failed", "", said or out.splitlines()[-6:] or ["(no output)"])


# -- VPP ---------------------------------------------------------------------------------------

#: The files of VPP's test/ that test what routerlab uses, run by default: IPv4 forwarding,
#: the ACL plug-in (test_acl_plugin_conns is all extended tests, which skip), and af_packet
#: and af_xdp interfaces routing (L3) between network namespaces. Left out: their L2
#: (bridged) and GSO/GRO variants, which routerlab does not configure, and everything else
#: of test/ (other features, other plug-ins).
VPP_TESTS = ("test_ip4", "test_acl_plugin", "test_acl_plugin_l2l3", "test_acl_plugin_macip",
             "test_acl_plugin_conns", "test_vm_af_packet_l3", "test_vm_af_xdp_l3")
#: Seconds the whole run of VPP's runner may take (its own limit is ten minutes a test).
VPP_SUITE_TIMEOUT_S = 3600
#: VPP's failures whose text names a reason that is not the install's: (pattern, the reason).
VPP_EXPECTED = (
    (r"CliFailedCommandError: test: unknown input",
     "needs the `test ...` debug commands of VPP's unittest plug-in, which routerlab does not build"),
    (r"ip_path_mtu_get\(cursor=\d+\) failed, expected 0 return value instead of -165",
     "upstream: VppIpPathMtu.query_vpp_config (test/vpp_ip.py) lists path MTUs with details_iter but "
     "accepts only retval 0, where VPP answers EAGAIN (-165) with a cursor once the handler has run 1 ms "
     "(vl_api_process_may_suspend), as on a busy machine; it passes at other times"),
)
#: Why a test upstream skips on Debian 12 and routerlab runs (see :data:`VPP_DRIVER`) may fail.
VPP_DEBIAN12 = ("upstream skips it on Debian 12 (@tag_fixme_debian12: \"FIXME intermittent test failures "
                "on debian12 distro\"); routerlab runs it anyway")

#: The driver of VPP's runner (``test/run_tests.py``, run unchanged through runpy): it
#: records each test's outcome as one JSON line (the runner prints descriptions, not test
#: names), lets the tests upstream skips on Debian 12 run, and drops ``api-fuzz { off }``
#: from VPP's command line (the section is the unittest plug-in's, which routerlab does not
#: build; off is VPP's default).
VPP_DRIVER = r"""
import json, os, runpy, sys, traceback

records, testdir = sys.argv[1], sys.argv[2]
sys.argv = [os.path.join(testdir, "run_tests.py"), *sys.argv[3:]]
sys.path.insert(0, testdir)
fd = os.open(records, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)


def record(kind, test_id, text=""):
    os.write(fd, (json.dumps({"kind": kind, "id": test_id, "text": text}) + "\n").encode())


import asfframework  # config.py reads sys.argv as it is imported
import discover_tests


def run_on_debian12(cls):
    cls.routerlab_fixme_debian12 = True
    return cls


asfframework.is_distro_debian12 = False
asfframework.tag_fixme_debian12 = run_on_debian12
_discover, _depth = discover_tests.discover_tests, []


def discover(directory, callback):
    _depth.append(directory)
    try:
        _discover(directory, callback)
    finally:
        _depth.pop()
    if not _depth:
        for suite in getattr(callback, "suites", {}).values():
            for test in suite:
                record("selected", test.id())
                if getattr(type(test), "routerlab_fixme_debian12", False):
                    record("fixme-debian12", test.id())


discover_tests.discover_tests = discover


def error_text(test, err):
    return "".join(traceback.format_exception(*err))[-4000:]


def skip_text(test, reason):
    if reason == "not enough cpus":
        return (f"not enough CPUs: needs {type(test).get_cpus_required()} (VPP's main thread and "
                f"{type(test).get_vpp_worker_count()} workers), this machine has {asfframework.max_vpp_cpus}")
    return str(reason)


def hook(name, kind, text):
    orig = getattr(asfframework.VppTestResult, name)

    def wrapped(self, test, *rest):
        try:
            record(kind, test.id(), text(test, *rest))
        finally:
            return orig(self, test, *rest)

    setattr(asfframework.VppTestResult, name, wrapped)


hook("addSuccess", "passed", lambda test: "")
hook("addSkip", "skipped", skip_text)
hook("addFailure", "failure", error_text)
hook("addError", "error", error_text)
hook("addExpectedFailure", "expected-failure", error_text)
hook("addUnexpectedSuccess", "unexpected-success", lambda test: "")
_constants = asfframework.VppAsfTestCase.setUpConstants.__func__


def setUpConstants(cls):
    _constants(cls)
    line = cls.vpp_cmdline
    for i in range(len(line) - 2):
        if line[i:i + 3] == ["api-fuzz {", "off", "}"]:
            del line[i:i + 3]
            break


asfframework.VppAsfTestCase.setUpConstants = classmethod(setUpConstants)
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def vpp_harness_python(src: Path, say: Callable[[str], None] = lambda s: None) -> Path:
    """The Python of a virtual environment made as VPP's ``test/Makefile`` makes its own
    (once, under the user cache): ``test/requirements-3.txt`` (pinned, with hashes), upstream's
    patches of scapy (``test/patches/scapy-VERSION``), and ``vpp_papi`` from
    ``src/vpp-api/python``."""
    reqs = src / "test" / "requirements-3.txt"
    scapy = re.search(r"^scapy==([^\s;]+)", reqs.read_text(), re.M)
    if scapy is None:
        raise RouterlabError(f"{reqs}: no scapy pin, the version upstream's patches are for")
    venv = cache.folder("harness") / f"vpp-{builds.sha256(reqs)[:12]}"
    python = venv / "bin" / "python"
    if (venv / ".ready").is_file():
        return python
    say(f"vpp: a virtual environment for its test framework from {reqs.relative_to(src)}")
    shutil.rmtree(venv, ignore_errors=True)
    _harness_step([sys.executable, "-m", "venv", str(venv)], venv)
    _harness_step([str(python), "-m", "pip", "install", "-q", "-r", str(reqs)], venv)
    site = next(venv.glob("lib/python3*/site-packages"))
    for patch in sorted((src / "test" / "patches" / f"scapy-{scapy.group(1)}").glob("*.patch")):
        _harness_step(["patch", "--forward", "-p1", "-d", str(site), "-i", str(patch)], venv)
    _harness_step([str(python), "-m", "pip", "install", "-q", str(src / "src" / "vpp-api" / "python")], venv)
    (venv / ".ready").write_text(scapy.group(0) + "\n")
    return python


def _harness_step(cmd: list[str], venv: Path):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode:
        shutil.rmtree(venv, ignore_errors=True)
        raise RouterlabError(f"{' '.join(cmd[:5])}...: {(p.stderr or p.stdout).strip()[-400:]}")


def vpp_filters(src: Path, tests: list[str] | None) -> list[str]:
    """The test selections of VPP's runner (``--filter``: FILE[.CLASS[.TEST]], FILE a
    ``test_*.py`` of ``test/`` without .py), :data:`VPP_TESTS` by default; refused when a
    file is not there."""
    names = [t.removesuffix(".py") for t in tests] if tests else list(VPP_TESTS)
    unknown = [t for t in names if not (src / "test" / (t.split(".")[0] + ".py")).is_file()
               or not t.startswith("test_")]
    if unknown:
        raise ParameterError("test", f"no such test file in vpp's test/: {', '.join(unknown)} "
                                     "(FILE[.CLASS[.TEST]], FILE as test_ip4)")
    return names


def vpp_excluded_plugins(src: Path, plugins: Path) -> list[str]:
    """The plug-ins of VPP's source that the install has not built: their tests skip
    (upstream's ``--excluded-plugin``, ``VPP_EXCLUDED_PLUGINS``)."""
    built = {p.name.removesuffix("_plugin.so") for p in plugins.glob("*_plugin.so")}
    return sorted(d.name for d in (src / "src" / "plugins").iterdir() if d.is_dir() and d.name not in built)


def vpp_results(records: str) -> list[TestResult]:
    """Each selected test's outcome from the driver's JSON lines (:data:`VPP_DRIVER`): a
    test without an outcome of its own takes its class's ``setUpClass`` error, else failed."""
    import json

    selected, fixme, got = {}, set(), {}
    for line in records.splitlines():
        if not line.strip():
            continue
        r = json.loads(line)
        if r["kind"] == "selected":
            selected.setdefault(r["id"], None)
        elif r["kind"] == "fixme-debian12":
            fixme.add(r["id"])
        else:
            got[r["id"]] = (r["kind"], r["text"])
    classes = {f"setUpClass ({name.rpartition('.')[0]})" for name in selected}
    results = []
    # after the selected tests, what the runner reported of no selected test (tearDownClass)
    for name in list(selected) + [k for k in got if k not in selected and k not in classes]:
        kind, text = got.get(name) or got.get(f"setUpClass ({name.rpartition('.')[0]})") \
            or ("error", _VPP_NO_OUTCOME)
        results.append(_vpp_outcome(name, kind, text, name in fixme))
    return results


_VPP_NO_OUTCOME = "no outcome: VPP's runner ended before the test did"


def _vpp_outcome(name: str, kind: str, text: str, fixme_debian12: bool) -> TestResult:
    if kind == "passed":
        return TestResult(name, "passed")
    if kind == "skipped":
        return TestResult(name, "skipped", text)
    if kind == "expected-failure":
        return TestResult(name, "expected", "upstream marks it @unittest.expectedFailure", _vpp_said(text))
    if kind == "unexpected-success":
        return TestResult(name, "failed", "", ["passed, but upstream marks it @unittest.expectedFailure"])
    said = _vpp_said(text)
    for pattern, why in VPP_EXPECTED:
        if re.search(pattern, text):
            return TestResult(name, "expected", why, said)
    if name in KNOWN.get("vpp", {}):
        return TestResult(name, "expected", KNOWN["vpp"][name], said)
    if fixme_debian12:
        return TestResult(name, "expected", VPP_DEBIAN12, said)
    return TestResult(name, "failed", "", said)


def _vpp_said(text: str) -> list[str]:
    """A traceback's last place in the tests and its exception."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    places = [ln for ln in lines if ln.startswith("File ")]
    last = [ln for ln in lines if not ln.startswith(("File ", "^", "~")) and ":" in ln][-1:]
    return (places[-1:] + last) or lines[-2:] or ["(no output)"]


def vpp_tests(tests: list[str] | None = None, *, say: Callable[[str], None] = lambda s: None) -> SuiteRun:
    """VPP's own tests (``test/run_tests.py`` over :func:`vpp_filters`) against routerlab's
    install, in network and PID namespaces of their own."""
    prefix = builds.installed("vpp")
    if prefix is None:
        raise RouterlabError("vpp is not installed: routerlab engines install vpp")
    suite_tools("vpp", say)
    src = source_tree("vpp", say)
    filters = vpp_filters(src, tests)
    plugins = next(prefix.glob("lib*/**/vpp_plugins"), None)
    if plugins is None:
        raise RouterlabError(f"{prefix}: no vpp_plugins folder")
    python = vpp_harness_python(src, say)
    excluded = vpp_excluded_plugins(src, plugins)
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="routerlab-vpp-") as tmp:
        driver, records = Path(tmp) / "driver.py", Path(tmp) / "results.jsonl"
        driver.write_text(VPP_DRIVER)
        (Path(tmp) / "run").mkdir()
        cmd = _own_network() + [
            str(python), str(driver), str(records), str(src / "test"), f"--vpp-ws-dir={src}", "--vpp-tag=vpp",
            f"--vpp={prefix / 'bin' / 'vpp'}", f"--vpp-install-dir={prefix}", f"--vpp-plugin-dir={plugins}",
            f"--venv-dir={python.parent.parent}", f"--tmp-dir={Path(tmp) / 'run'}", "--verbose=0",
            f"--filter={','.join(filters)}", *(f"--excluded-plugin={p}" for p in excluded)]
        say(f"vpp: {', '.join(filters)} of test/run_tests.py against {prefix}")
        code, out = _harness(cmd, src / "test", VPP_SUITE_TIMEOUT_S)
        if code is None:
            out += f"\n(VPP's runner did not end within {VPP_SUITE_TIMEOUT_S} s)"
        results = vpp_results(records.read_text() if records.is_file() else "")
    if not results:
        raise RouterlabError("VPP's runner ran no test:\n" + "\n".join(out.splitlines()[-15:]))
    for r in results:  # what the runner said last tells why it ended
        if r.lines == [_VPP_NO_OUTCOME]:
            r.lines += out.splitlines()[-3:]
    return SuiteRun("vpp", SUITES["vpp"], results, time.monotonic() - t0, list_skipped=True)


def report(runs: list[SuiteRun]) -> str:
    """Per suite: tests run, passed, skipped, failed as upstream expects, failed; then each
    expected failure with its reason and each failure with what the harness said."""
    lines = []
    for r in runs:
        lines.append(f"{r.engine} {r.suite}: {len(r.results)} run, {r.count('passed')} passed, "
                     f"{r.count('skipped')} skipped by their own requirements, {r.count('expected')} failed as "
                     f"expected, {r.count('failed')} failed ({r.seconds:.0f} s)")
        for t in r.results:
            if t.outcome == "skipped" and r.list_skipped:
                lines.append(f"  skipped   {t.name}: {t.why}")
        for t in r.results:
            if t.outcome == "expected":
                lines.append(f"  expected  {t.name}: {t.why}")
        for t in r.results:
            if t.outcome == "failed":
                lines.append(f"  FAILED    {t.name}")
                lines += [f"            {ln}" for ln in t.lines[:6]]
    return "\n".join(lines)
