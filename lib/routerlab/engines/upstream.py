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
SUITES = {"click": "test/clicktest", "fastclick": "test/clicktest", "p4c": "bmv2 (backends/bmv2/run-bmv2-test.py)"}
#: Debian packages the suites' scripts call: netcat (ControlSocket tests), tcpdump.
SUITE_DEBIAN = {"click": ["perl", "netcat-openbsd", "tcpdump"], "fastclick": ["perl", "netcat-openbsd", "tcpdump"],
                "p4c": ["python3-venv"]}
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
    """The suites of ``engines`` (each must have one: :data:`SUITES`), their tools installed
    first."""
    unknown = [e for e in engines if e not in SUITES]
    if unknown:
        raise ParameterError("engine", f"no upstream suite here for {', '.join(unknown)}; suites: {', '.join(SUITES)}")
    builds.install_debian(sorted({p for e in engines for p in SUITE_DEBIAN[e]}), say, "tools of the test suites")
    return [p4c_bmv2(tests, say=say) if e == "p4c" else clicktest(e, tests, say=say) for e in engines]


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


def _p4c_one(name: str, cmd: list[str], cwd: Path, xfail: dict[str, str]) -> TestResult:
    """One program through p4c's harness: exit 0 passes; a failure is expected when
    upstream lists the program in ``XFAIL_TESTS``."""
    p = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         start_new_session=True)
    _RUNNING.add(p)
    try:
        out, _ = p.communicate(timeout=P4C_TEST_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        _end_group(p)
        p.communicate()
        # as for CTest, a timeout fails a test upstream expects to fail too
        return TestResult(name, "failed", "", [f"the harness did not end within {P4C_TEST_TIMEOUT_S} s"])
    finally:
        _end_group(p)
        _RUNNING.discard(p)
    if p.returncode == 0:
        # upstream's XFAIL that passes is, for CTest, a failure: "unexpectedly passed"
        return TestResult(name, "failed", "", ["passed, but upstream lists it in XFAIL_TESTS"]) if name in xfail \
            else TestResult(name, "passed")
    said = [ln for ln in out.splitlines() if re.search(r"error|\*\*\*|ERROR|Traceback|expected|Error", ln)][-6:]
    if name in xfail:
        return TestResult(name, "expected", xfail[name], said)
    return TestResult(name, "failed", "", said or out.splitlines()[-6:] or ["(no output)"])


def report(runs: list[SuiteRun]) -> str:
    """Per suite: tests run, passed, skipped, failed as upstream expects, failed; then each
    expected failure with its reason and each failure with what the harness said."""
    lines = []
    for r in runs:
        lines.append(f"{r.engine} {r.suite}: {len(r.results)} run, {r.count('passed')} passed, "
                     f"{r.count('skipped')} skipped by their own requirements, {r.count('expected')} failed as "
                     f"expected, {r.count('failed')} failed ({r.seconds:.0f} s)")
        for t in r.results:
            if t.outcome == "expected":
                lines.append(f"  expected  {t.name}: {t.why}")
        for t in r.results:
            if t.outcome == "failed":
                lines.append(f"  FAILED    {t.name}")
                lines += [f"            {ln}" for ln in t.lines[:6]]
    return "\n".join(lines)
