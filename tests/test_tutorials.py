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
    from routerlab import userns
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
    for attempt in range(3):
        p = _make_test(basic)
        if p is not None:
            break
        # the tutorials' own client waited for an answer that never came, in a test's
        # setUp (its arbitration, or setting the pipeline, which it gives no timeout):
        # seen in about one run of three on a busy machine, not understood
        # (docs/journal/2026-11-28-p4runtime.md); three hangs in a row are a failure
        import warnings

        warnings.warn(f"exercises/{exercise}'s make test hung (try {attempt + 1} of 3); its PTF log ended: "
                      f"{_tail(basic / 'ptf.log')}")
    assert p is not None, f"make test hung three times; the PTF log ends:\n{_tail(basic / 'ptf.log', 20)}"
    said = p.stdout + p.stderr
    assert p.returncode == 0, said[-3000:]
    ran = re.search(r"^Ran (\d+) tests? in", said, re.M)
    assert ran and int(ran.group(1)) >= 6 and "\nOK" in said, said[-3000:]  # basic has 6, basic_tunnel 7
    # bmv2 saw its ports (the namespace's own sysfs), and nothing of the test is on the host
    assert "open: No such file or directory" not in said
    assert set(os.listdir("/sys/class/net")) == host


def _make_test(basic: Path, timeout: float = 120):
    """``make test`` in ``basic`` through ``routerlab engines run --isolated``; None if it
    did not end within ``timeout`` seconds (everything it started is gone with it)."""
    try:
        return subprocess.run([ROUTERLAB, "engines", "run", "--isolated", "--", "make", "test"], cwd=basic,
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None


def _tail(path: Path, n: int = 3) -> str:
    return "\n".join(path.read_text(errors="replace").splitlines()[-n:]) if path.is_file() else f"({path} missing)"


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
