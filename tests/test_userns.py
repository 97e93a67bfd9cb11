"""A testbed of one's own: user and network namespaces for checks without root
(routerlab.testbed.userns), against the real kernel: as root, and as a user with no privilege."""

import os
import pwd
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from routerlab.course import checks
from routerlab.testbed import userns
from routerlab.testbed import capabilities, namespaces, shell
from routerlab.errors import NeedsRoot, ParameterError, RouterlabError

MISSING = userns.missing()
FORWARDED = "UDP 10.70.1.2:1234 > 10.70.2.2:5000 TTL 63"
needs_userns = pytest.mark.skipif(MISSING is not None, reason=f"no user namespaces here: {MISSING}")


# functions the child calls (userns.call imports this module in the child)

def forwarded_by_the_kernel(ttl: int) -> dict:
    """A testbed without placement whose DUT namespace routes with the kernel; a frame
    sent into port 0: what left on each port, and who the child was."""
    with namespaces.NamespaceTestbed(generator="rlgen", placement=False) as tb:
        shell.nsexec(tb.ns_dut, "sysctl", "-qw", "net.ipv4.ip_forward=1")
        got = checks.through(tb, [checks.frame("10.70.2.2", ttl=ttl)], 0)
        return {"euid": os.geteuid(), "inside": userns.inside(),
                "got": {port: [checks.describe(f) for f in fs] for port, fs in got.items()}}


def placed_testbed():
    with namespaces.NamespaceTestbed(generator="rlgen"):
        pass


def failing():
    raise RouterlabError("what went wrong, in one line")


def up_then_wait(marker: str, down: str):
    """A testbed with a process in it, then waiting to be interrupted; ``down`` is
    written once the testbed is down."""
    try:
        with namespaces.NamespaceTestbed(generator="rlgen", placement=False) as tb:
            tb.spawn(tb.ns_dut, "sleep", marker)
            print("up", flush=True)
            time.sleep(600)
    finally:
        Path(down).write_text("down")


def not_ours():
    raise ZeroDivisionError("a bug")


def bad_parameter():
    from routerlab.errors import ParameterError

    raise ParameterError("--rate", "must be > 0")


def test_this_process_is_in_the_machines_user_namespace():
    assert userns.inside() is False


@needs_userns
def test_a_rootless_testbed_forwards_real_packets_and_decrements_ttl():
    got = userns.call(f"{__name__}:forwarded_by_the_kernel", 64)
    assert got == {"euid": 0, "inside": True, "got": {0: [], 1: [FORWARDED]}}
    # TTL 1: the kernel answers "time exceeded" to the generator
    assert userns.call(f"{__name__}:forwarded_by_the_kernel", 1)["got"] == {
        0: ["ICMP 10.70.1.1 > 10.70.1.2 type 11 code 0 TTL 64"], 1: []}


@needs_userns
def test_in_a_user_namespace_a_testbed_for_measuring_refuses_in_one_line():
    with pytest.raises(RouterlabError, match="a testbed for measuring needs root of the machine"):
        userns.call(f"{__name__}:placed_testbed")


def test_a_testbed_without_placement_sends_with_rlgen(monkeypatch):
    # on a machine whose kernel runs live frames (where it refuses them, xdp becomes rlgen first)
    monkeypatch.setattr(capabilities, "live_frames_missing", lambda: None)
    with pytest.raises(RouterlabError, match="generator"):
        namespaces.NamespaceTestbed(generator="xdp", placement=False)


@needs_userns
def test_an_error_in_the_child_is_raised_here_with_its_message():
    with pytest.raises(RouterlabError, match="^what went wrong, in one line$"):
        userns.call(f"{__name__}:failing")


@needs_userns
def test_an_error_keeps_its_class_and_a_bug_is_named_not_lost(capfd):
    with pytest.raises(ParameterError, match="^--rate: must be > 0$"):
        userns.call(f"{__name__}:bad_parameter")
    with pytest.raises(RouterlabError, match="failed in its user namespace: ZeroDivisionError: a bug"):
        userns.call(f"{__name__}:not_ours")
    assert "Traceback" in capfd.readouterr().err


def test_a_path_under_run_is_refused_naming_it():
    with pytest.raises(ParameterError, match="^log: /run/user/1000/x.log is under /run"):
        userns.call(f"{__name__}:failing", log="/run/user/1000/x.log")


def test_without_user_namespaces_the_call_says_why(monkeypatch):
    monkeypatch.setattr(userns, "missing", lambda: "this machine refuses user namespaces to users: denied")
    monkeypatch.setattr(userns, "container", lambda: None)
    with pytest.raises(NeedsRoot, match="refuses user namespaces.*without a user namespace this needs root"):
        userns.call(f"{__name__}:failing")
    # in a container root is no way round: what it lacks are the options it names
    monkeypatch.setattr(userns, "container", lambda: "podman")
    with pytest.raises(NeedsRoot, match="^this machine refuses user namespaces to users: denied$"):
        userns.call(f"{__name__}:failing")


def test_a_container_without_the_options_is_told_them(monkeypatch):
    """The refusal's line in a container names that engine's options
    (`tests/test_course_image.py` starts a real one without them)."""
    userns.missing.cache_clear()
    monkeypatch.setattr(userns, "UNSHARE", ["sh", "-c", "echo 'unshare: mount /proc failed: Operation not permitted' >&2; exit 1"])
    monkeypatch.setattr(userns, "container", lambda: "docker")
    try:
        why = userns.missing()
    finally:
        userns.missing.cache_clear()
    assert why == ("this container refuses user namespaces to its users (unshare: mount /proc failed: Operation not "
                   "permitted): start it with " + " ".join(userns.CONTAINER_OPTIONS["docker"]))


def _others_reach(path: Path) -> bool:
    """Whether a user with no privilege reaches ``path`` and reads it."""
    return bool(path.stat().st_mode & 0o004) and all(p.stat().st_mode & 0o001 for p in path.parents)


def _left(marker: str) -> list[str]:
    return subprocess.run(["pgrep", "-f", f"sleep {marker}"], capture_output=True, text=True).stdout.split()


def _start_waiting(marker: str, down: Path) -> subprocess.Popen:
    # as a user at a terminal: Ctrl-C not ignored, even where this test runs under a shell
    # that ignores it (a job started with `&`, or under nohup). Set in the child's own code:
    # a preexec_fn runs Python in a fork of this process, whose gRPC threads (the P4Runtime
    # tests') sometimes broke that fork before it could exec
    code = ("import signal; signal.signal(signal.SIGINT, signal.default_int_handler); "
            f"from routerlab.testbed import userns; userns.call('test_userns:up_then_wait', {marker!r}, {str(down)!r})")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(Path(__file__).parent)] + sys.path))
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=env)
    assert p.stdout.readline().strip() == "up", p.stderr.read()
    assert _left(marker)
    return p


@needs_userns
@pytest.mark.parametrize("how", ["ctrl-c", "kill -9"])
def test_nothing_is_left_behind_when_a_check_is_interrupted(how, tmp_path):
    marker = f"{os.getpid() % 1000}.{'5' if how == 'ctrl-c' else '9'}71"
    down = tmp_path / "down"
    p = _start_waiting(marker, down)
    p.send_signal(signal.SIGINT if how == "ctrl-c" else signal.SIGKILL)
    try:
        p.wait(timeout=40)
    except subprocess.TimeoutExpired:
        # what the interrupted call and its children were doing: their signal masks and states
        tree = subprocess.run(["ps", "-o", "pid,ppid,stat,wchan:20,args", "--forest", "-g", str(os.getpgid(p.pid))],
                              capture_output=True, text=True).stdout
        status = Path(f"/proc/{p.pid}/status").read_text()
        sigs = [ln for ln in status.splitlines() if ln.startswith(("State", "SigPnd", "ShdPnd", "SigBlk", "SigIgn", "SigCgt"))]
        p.kill()
        pytest.fail(f"not down 40 s after {how}: {sigs}\n{tree}")
    if how == "ctrl-c":
        assert p.returncode != 0 and "KeyboardInterrupt" in p.stderr.read()
        assert down.read_text() == "down"  # the child took its testbed down itself
    for _ in range(50):  # a kill -9 is passed down by the kernel, not at once
        if not _left(marker):
            break
        time.sleep(0.1)
    assert _left(marker) == []


@needs_userns
@pytest.mark.skipif(os.geteuid() != 0, reason="needs root: to become another user")
def test_a_user_with_no_privilege_gets_a_testbed(tmp_path):
    """As ``nobody``: the same kernel forwarding, with no capability of the machine."""
    nobody = pwd.getpwnam("nobody")
    here = Path(__file__).resolve().parent
    if not _others_reach(here / "conftest.py"):
        pytest.skip(f"{here} is not readable by other users: nobody cannot import these tests")
    # this Python, or the system's of the same version where this one is not others' to run
    # (a virtual environment's python under /root); the packages come from sys.path
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    python = next((p for p in (sys.executable, shutil.which(version, path="/usr/bin:/usr/local/bin"))
                   if p and _others_reach(Path(p).resolve())), None)
    if python is None:
        pytest.skip(f"neither {sys.executable} nor a system {version} is others' to run")
    os.chown(tmp_path, nobody.pw_uid, nobody.pw_gid)
    code = textwrap.dedent("""
        import os
        from routerlab.testbed import userns
        assert os.geteuid() != 0
        print(userns.call('test_userns:forwarded_by_the_kernel', 64))
""")
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path),
           "PYTHONPATH": os.pathsep.join([str(here)] + [p for p in sys.path if p])}
    p = subprocess.run(["setpriv", f"--reuid={nobody.pw_uid}", f"--regid={nobody.pw_gid}", "--clear-groups",
                        python, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path,
                       timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == str({"euid": 0, "inside": True, "got": {0: [], 1: [FORWARDED]}})
