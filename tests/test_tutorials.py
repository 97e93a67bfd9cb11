"""p4lang/tutorials as they are, on routerlab's engines: the own PTF tests of
exercises/basic and exercises/basic_tunnel (``make test``) through ``routerlab engines
run --isolated``, and basic's program with its runtime file through ``routerlab p4 run``.

The tutorials come from ``$ROUTERLAB_EXTERNAL`` (CI: ``../shared/external``, a pinned
copy), or from GitHub at the same commit.
"""

import os
import re
import subprocess
import sys
import tarfile
import threading
import warnings
from pathlib import Path

import pytest

from conftest import ROOT, engine_absent

COMMIT = "dc1b049be49c210eb38e2c815d245704826fd9f6"
#: The SHA-256 of the pinned copy (``../shared/external/README.md``); GitHub's archive of
#: the same commit has other bytes, so a download is checked by its top folder only.
SHA256 = "403cab337d2b82acd62f9b51f484fd693997590b83d986a5dbf4cefd96ea5b4e"
FILE = f"tutorials-{COMMIT}.tar.gz"
ROUTERLAB = str(Path(sys.executable).parent / "routerlab")


@pytest.fixture(scope="module")
def tutorials(tmp_path_factory) -> Path:
    """The p4lang/tutorials tree at :data:`COMMIT`, unpacked in a temporary folder."""
    from routerlab.engines import builds

    folder = os.environ.get("ROUTERLAB_EXTERNAL") or str(ROOT.parent / "shared" / "external")
    tarball = Path(folder) / FILE
    if tarball.is_file():
        assert builds.sha256(tarball) == SHA256, f"{tarball}: not the pinned copy"
    else:
        tarball = tmp_path_factory.mktemp("download") / FILE
        try:
            builds._download(f"https://github.com/p4lang/tutorials/archive/{COMMIT}.tar.gz", tarball,
                             "offline? set ROUTERLAB_EXTERNAL to a folder holding " + FILE)
        except Exception as e:  # noqa: BLE001
            engine_absent(f"p4lang/tutorials not available: {e}")
    out = tmp_path_factory.mktemp("tutorials")
    with tarfile.open(tarball) as t:
        t.extractall(out, filter="data")
    tree = out / f"tutorials-{COMMIT}"
    assert (tree / "exercises" / "basic" / "Makefile").is_file()
    return tree


def _engines_ready():
    from routerlab.testbed import userns
    from routerlab.engines import environment
    from routerlab.errors import RouterlabError

    if os.geteuid() != 0 and userns.missing():
        pytest.skip(f"needs root or user namespaces: {userns.missing()}")

    try:
        environment.variables()
    except RouterlabError as e:
        engine_absent(f"p4c and bmv2 with simple_switch_grpc not built: {e}")
    try:
        import ptf  # noqa: F401
    except ImportError:
        engine_absent("ptf not installed (pip install 'routerlab[tutorials]')")


@pytest.mark.parametrize("exercise", ["basic", "basic_tunnel"])
def test_an_exercises_ptf_test_passes(tutorials, exercise):
    """`make test` of the exercises that have one: p4c compiles the solution,
    simple_switch_grpc runs it with eight veth ports, and the PTF tests write their
    entries over P4Runtime with the tutorials' own p4runtime_lib and check the
    forwarding."""
    _engines_ready()
    basic = tutorials / "exercises" / exercise
    host = set(os.listdir("/sys/class/net"))
    for attempt in range(1, TRIES + 1):
        returncode, said = _make_test(basic)
        race = _upstream_race(returncode, said)
        if race is None:
            break
        warnings.warn(f"exercises/{exercise}'s make test, try {attempt} of {TRIES}: {race}")
    assert race is None, f"make test met the tutorials' own races {TRIES} times in a row; the last:\n{said[-3000:]}"
    assert returncode is not None, f"make test hung; the PTF log ends:\n{_tail(basic / 'ptf.log', 20)}\n{said[-3000:]}"
    assert returncode == 0, said[-3000:]
    ran = re.search(r"^Ran (\d+) tests? in", said, re.M)
    assert ran and int(ran.group(1)) >= 6 and "\nOK" in said, said[-3000:]  # basic has 6, basic_tunnel 7
    # bmv2 saw its ports (the namespace's own sysfs), and nothing of the test is on the host
    assert "open: No such file or directory" not in said
    assert set(os.listdir("/sys/class/net")) == host


#: Tries of ``make test``, each ended by one of the tutorials' own races
#: (:func:`_upstream_race`) before the test fails.
TRIES = 4
#: What PI's server answers an arbitration whose election id another stream holds.
ELECTION_TAKEN = "Election id already exists"


def _upstream_race(returncode: int | None, said: str) -> str | None:
    """Which of two races of the tutorials' own test script ended this ``make test``,
    or None. Neither is routerlab's (docs/journal/2026-12-01-tutorials-races.md).

    - Each PTF test's ``tearDown`` half-closes its P4Runtime stream, and the next
      ``setUp`` opens one with the same election id at once. When PI's server has not yet
      dropped the old stream, it refuses the new one (``ELECTION_TAKEN``); the
      tutorials' client ends its reading thread on that and waits for an arbitration
      answer forever.
    - ``runptf.sh`` ends with ``ps axguwww | grep simple_switch``, whose status is the
      script's: it is 0 only when ``ps`` lists the ``grep`` itself, that is when
      ``grep`` was already started when ``ps`` read the process table.
    """
    if ELECTION_TAKEN in said:
        return f"PI refused the next test's stream, the last one's still open ({ELECTION_TAKEN!r})"
    lines = said.splitlines()
    last = max((i for i, line in enumerate(lines) if line in ("+ ps axguwww", "+ grep simple_switch")), default=None)
    if (returncode not in (0, None) and last is not None and "\nOK" in said
            and not [line for line in lines[last + 1:] if line.strip() and not line.startswith("make")]):
        return "the script's last `ps | grep simple_switch` did not list the grep itself"
    return None


def _make_test(basic: Path, timeout: float = 120) -> tuple[int | None, str]:
    """``make test`` in ``basic`` through ``routerlab engines run --isolated``: its status
    (None if it did not end within ``timeout`` seconds) and what it printed, both streams
    in the order written. It is killed once PI refused a stream, after which the
    tutorials' client never ends. Everything it started is gone with it."""
    p = subprocess.Popen([ROUTERLAB, "engines", "run", "--isolated", "--", "make", "test"], cwd=basic,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines: list[str] = []

    def read():
        for line in p.stdout:
            lines.append(line)
            if ELECTION_TAKEN in line:
                p.kill()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        returncode = p.wait(timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        returncode = None
    reader.join(10)
    return returncode, "".join(lines)


def _tail(path: Path, n: int = 3) -> str:
    return "\n".join(path.read_text(errors="replace").splitlines()[-n:]) if path.is_file() else f"({path} missing)"


ARBITRATION = """
import queue, subprocess, time
import grpc
from p4.v1 import p4runtime_pb2 as pb, p4runtime_pb2_grpc

switch = subprocess.Popen(["simple_switch_grpc", "--no-p4"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
channel = grpc.insecure_channel("localhost:9559")
grpc.channel_ready_future(channel).result(timeout=60)
stub = p4runtime_pb2_grpc.P4RuntimeStub(channel)

def stream():
    requests = queue.Queue()
    requests.put(pb.StreamMessageRequest(arbitration={"device_id": 0, "election_id": {"low": 1}}))
    answers = stub.StreamChannel(iter(requests.get, None))
    try:
        next(answers)
        return (requests, answers), "answered"  # the stream lives as long as its answers
    except grpc.RpcError as e:
        return (requests, answers), e.details()

(first, answers), said = stream()
print("first:", said)
print("second, the first open:", stream()[1])
first.put(None)
time.sleep(1)
print("third, the first closed:", stream()[1])
switch.kill()
"""


def test_pi_refuses_an_election_id_another_stream_holds(tmp_path):
    """The cause of the tutorials' hang (:func:`_upstream_race`): PI's server refuses an
    arbitration with the election id of a stream still open, and takes it once that
    stream is closed."""
    _engines_ready()
    script = tmp_path / "arbitration.py"
    script.write_text(ARBITRATION)
    p = subprocess.run([ROUTERLAB, "engines", "run", "--isolated", "--", sys.executable, str(script)],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.splitlines() == ["first: answered", f"second, the first open: {ELECTION_TAKEN}",
                                     "third, the first closed: answered"], p.stdout + p.stderr


def test_tutorials_program_runs_unmodified_with_its_runtime_file(tutorials):
    """basic.p4 and pod-topo/s1-runtime.json as they are: 10.0.1.1 goes out of port 1
    (s1's h1), and a host with no route is dropped."""
    _engines_ready()
    basic = tutorials / "exercises" / "basic"
    p = subprocess.run([ROUTERLAB, "p4", "run", str(basic / "solution" / "basic.p4"),
                        "--entries", str(basic / "pod-topo" / "s1-runtime.json"),
                        "udp 10.0.2.2 > 10.0.1.1", "udp 10.0.2.2 > 10.0.9.9"],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "runs on bmv2 (p4runtime) with 5 table entries" in p.stdout, p.stdout
    first, second = p.stdout.split("sent ")[1:3]
    assert "left on port 1: UDP 10.0.2.2:1234 > 10.0.1.1:5000 TTL 63" in first, p.stdout
    assert "nothing came back" in second, p.stdout


def test_an_entry_the_program_lacks_is_named_and_nothing_runs(tutorials, tmp_path):
    _engines_ready()
    import json

    basic = tutorials / "exercises" / "basic"
    runtime = json.loads((basic / "pod-topo" / "s1-runtime.json").read_text())
    runtime["table_entries"][2]["action_params"]["nextHop"] = 3
    bad = tmp_path / "s1-runtime.json"
    bad.write_text(json.dumps(runtime))
    p = subprocess.run([ROUTERLAB, "p4", "run", str(basic / "solution" / "basic.p4"), "--entries", str(bad),
                        "udp 10.0.2.2 > 10.0.1.1"], capture_output=True, text=True, timeout=300)
    assert p.returncode == 2, p.stdout + p.stderr
    assert str(bad) in p.stderr and "table_entries[2]" in p.stderr and "ipv4_forward" in p.stderr, p.stderr
    assert "sent" not in p.stdout


def test_the_environment_finds_routerlabs_engines_and_p4runtime_modules(tmp_path):
    """`routerlab engines env`, evaluated by a shell: p4c and simple_switch_grpc are
    routerlab's, and PI's modules import beside protobuf's (google stays one namespace)."""
    _engines_ready()
    from routerlab.engines import builds

    script = tmp_path / "check.sh"
    script.write_text(f'eval "$({ROUTERLAB} engines env)"\ncommand -v p4c; command -v simple_switch_grpc; command -v ptf\n'
                      'python -c "from p4.v1 import p4runtime_pb2; from p4.tmp import p4config_pb2; '
                      'import google.protobuf, google.rpc.status_pb2; print(p4runtime_pb2.__file__)"\n')
    p = subprocess.run(["sh", str(script)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    p4c, switch, ptf, module = p.stdout.split()
    assert Path(p4c).resolve().parent.parent == builds.installed("p4c").resolve()
    assert Path(switch).parent.parent.name.startswith(("bmv2-log-", "bmv2-"))
    assert Path(ptf).parent == Path(sys.executable).parent
    assert Path(module).is_relative_to(Path(switch).parent.parent)
    r = subprocess.run([ROUTERLAB, "engines", "run", "--", "sh", "-c", "exit 3"], capture_output=True)
    assert r.returncode == 3  # the command's status is routerlab's
