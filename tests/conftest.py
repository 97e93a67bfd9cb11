"""Shared fixtures: data locations, a seeded RNG, and figures closed after each test."""

import contextlib
import os
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = Path(os.environ.get("ROUTERLAB_PASTRAMI_SAMPLE", ROOT.parent / "shared" / "datasets" / "pastrami-sample"))
#: PASTRAMI's misure.zip at the commit routerlab pins, as the shared offline copy keeps it.
SHARED_ARCHIVE = ROOT.parent / "shared" / "external" / "pastrami-misure-c4a152cd3f9f65496d1b26cb8cadb7f87e824a8a.zip"
#: The MoonRoute authors' repository at the commit routerlab pins, as GitHub archives it
#: (the shared copy for machines that cannot reach GitHub).
MOONROUTE_COPY = ROOT.parent / "shared" / "external" / "MoonRoute-data-51333dc648ca42f3740f6d09895e1ad4a9f67d69.tar.gz"


#: Set by `make test` and CI after `routerlab engines install`: an engine that is missing
#: then fails its test instead of skipping it.
REQUIRE_ENGINES = os.environ.get("ROUTERLAB_REQUIRE_ENGINES") == "1"


def engine_absent(reason: str):
    """Skip a test whose engine is not there, naming what is missing; with
    ROUTERLAB_REQUIRE_ENGINES=1, fail it."""
    if REQUIRE_ENGINES:
        pytest.fail(f"{reason} (ROUTERLAB_REQUIRE_ENGINES=1: a missing engine fails its test)", pytrace=False)
    pytest.skip(reason)


def checked_engine(name: str, sc=None):
    """The engine ``name``, after its check for scenario ``sc``; if it is not ready, the
    test skips naming why (:func:`engine_absent`)."""
    from routerlab import engines

    eng = engines.get(name)
    try:
        eng.check(sc)
    except Exception as e:  # noqa: BLE001
        engine_absent(str(e))
    return eng


def engine_marks(what: str, find):
    """Marks for the tests that need an engine: (needs it, needs it and root). ``find()``
    raises a RouterlabError saying what is missing; both marks then skip naming it (fail
    under ROUTERLAB_REQUIRE_ENGINES=1); the second also skips without root."""
    from routerlab.errors import RouterlabError

    try:
        find()
    except RouterlabError as e:
        absent = pytest.mark.engine_absent(f"{what} not built: {e}")
        return absent, absent
    return (pytest.mark.skipif(False, reason=""),
            pytest.mark.skipif(os.geteuid() != 0, reason="needs root: network namespaces"))


def pytest_runtest_setup(item):
    for mark in item.iter_markers("engine_absent"):
        engine_absent(mark.args[0])


@pytest.fixture
def rng():
    return np.random.default_rng(20261122)


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="session")
def moonroute_copy() -> Path:
    """The MoonRoute authors' files: ``$ROUTERLAB_MOONROUTE_DIR``, else the shared copy
    (../shared/external), else downloaded at the pinned commit; skipped when none is at hand."""
    from routerlab.analysis import moonroute
    from routerlab.errors import DataUnavailable

    given = os.environ.get(moonroute.ENV_DIR) or (MOONROUTE_COPY if MOONROUTE_COPY.is_file() else None)
    try:
        return moonroute.locate(given)
    except DataUnavailable as e:
        pytest.skip(f"MoonRoute data not at hand: {e}")


@pytest.fixture
def pastrami_sample() -> Path:
    """The 20-file PASTRAMI sample with expected verdicts (../shared/datasets/pastrami-sample)."""
    if not (SAMPLE / "verdicts.tsv").is_file():
        pytest.skip(f"PASTRAMI sample not found at {SAMPLE} (set ROUTERLAB_PASTRAMI_SAMPLE)")
    return SAMPLE


@pytest.fixture(scope="session")
def pastrami_published(tmp_path_factory) -> Path:
    """The whole published PASTRAMI set, its loose raw files and misure.zip: the folder
    $ROUTERLAB_PASTRAMI_DIR names, else laid out from the shared misure.zip, which holds
    every loose file again (each member put where the registry pins a file of its SHA-256,
    whatever the member's own name); skipped when neither is at hand."""
    import hashlib
    import shutil
    import zipfile

    from routerlab.analysis import pastrami

    folder = os.environ.get(pastrami.ENV_DIR)
    if folder and (Path(folder) / pastrami.ARCHIVE).is_file():
        return Path(folder)
    if not SHARED_ARCHIVE.is_file():
        pytest.skip(f"the published PASTRAMI set: set {pastrami.ENV_DIR} to a copy with its loose files and "
                    f"misure.zip, or put the archive at {SHARED_ARCHIVE}")
    where = {sha.removeprefix("sha256:"): path for path, sha in pastrami.registry().items()
             if path != pastrami.ARCHIVE}
    out = tmp_path_factory.mktemp("pastrami-published")
    with zipfile.ZipFile(SHARED_ARCHIVE) as z:
        for m in z.namelist():
            body = z.read(m) if not m.endswith("/") else b""
            path = where.get(hashlib.sha256(body).hexdigest())
            if path:
                (out / path).parent.mkdir(parents=True, exist_ok=True)
                (out / path).write_bytes(body)
    missing = [p for p in where.values() if not (out / p).is_file()]
    assert not missing, f"{SHARED_ARCHIVE} lacks pinned loose files: {missing[:3]}"
    shutil.copyfile(SHARED_ARCHIVE, out / pastrami.ARCHIVE)
    return out


@pytest.fixture
def pastrami_archive() -> Path:
    """PASTRAMI's misure.zip at the pinned commit: $ROUTERLAB_PASTRAMI_DIR's, else the
    shared offline copy (../shared/external)."""
    from routerlab.analysis import pastrami

    folder = os.environ.get(pastrami.ENV_DIR)
    if folder and (Path(folder) / pastrami.ARCHIVE).is_file():
        return Path(folder) / pastrami.ARCHIVE
    if not SHARED_ARCHIVE.is_file():
        pytest.skip(f"PASTRAMI's misure.zip: neither in ${pastrami.ENV_DIR} nor at {SHARED_ARCHIVE}")
    return SHARED_ARCHIVE


@pytest.fixture
def served(tmp_path):
    """A local HTTP server of ``tmp_path / "www"``: files as a project's host would serve
    them (or spoiled), for the pinned downloads' tests; (that folder, its URL)."""
    import functools
    import http.server
    import threading

    root = tmp_path / "www"
    root.mkdir()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    handler.log_message = lambda *a: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield root, f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


def write_raw(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="session")
def wheel(tmp_path_factory) -> Path:
    """The wheel of this working tree, built as pip builds it for a user (`pip install
    git+...`): once per session, for the tests of the install and of the packaging."""
    import subprocess
    import sys

    out = tmp_path_factory.mktemp("wheel")
    p = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--wheel-dir", str(out), str(ROOT)],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    (whl,) = out.glob("routerlab-*.whl")
    return whl


def tiny_tarball(folder: Path, repo: str = "example/tiny",
                 commit: str = "0123456789abcdef0123456789abcdef01234567") -> tuple[Path, str]:
    """A source tarball in GitHub's archive layout (top folder ``<name>-<commit>/``) of a
    tiny program, ``tiny.sh``, in ``folder``: an engine that builds in a second. Returns
    its path and SHA-256."""
    import hashlib
    import io
    import tarfile

    name = repo.split("/")[1]
    path = Path(folder) / f"{name}-{commit}.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        data = b"#!/bin/sh\necho tiny router\n"
        info = tarfile.TarInfo(f"{name}-{commit}/tiny.sh")
        info.size, info.mode = len(data), 0o755
        tar.addfile(info, io.BytesIO(data))
    return path, hashlib.sha256(path.read_bytes()).hexdigest()


def p4_check_engines():
    """What the P4 exercises' checks run, bmv2's logging build and p4c; raises a
    RouterlabError naming what is missing (for :func:`engine_marks`)."""
    from routerlab.engines import p4
    from routerlab.engines.bmv2 import Bmv2

    eng = Bmv2()
    eng.log_packets = True
    eng.check()
    p4.p4c()


def podman_or_skip(what: str) -> None:
    """Skip ``what`` (a test of the course image) naming what it lacks: root, Podman or
    mmdebstrap (scripts/debian-packages.txt); under ROUTERLAB_REQUIRE_ENGINES=1 (CI) fail it."""
    import shutil

    missing = [t for t in ("podman", "mmdebstrap") if not shutil.which(t)]
    why = None
    if os.geteuid() != 0:
        why = "needs root: Podman runs the course's containers here as root"
    elif missing:
        why = f"{', '.join(missing)} not installed (scripts/debian-packages.txt; scripts/setup.sh installs them)"
    if why:
        if REQUIRE_ENGINES:
            pytest.fail(f"{why} (ROUTERLAB_REQUIRE_ENGINES=1: {what} must run)", pytrace=False)
        pytest.skip(why)


@contextlib.contextmanager
def trial_in_background(tb, name: str, rate_pps: float, duration_s: float):
    """Run a trial of ``rate_pps`` for ``duration_s`` on ``tb`` in a thread, and yield
    (the pid of its generator, the program ``name``, once the sink counts its first
    frames: its schedule has started; a dict whose ``"r"`` is the trial's result once the
    block has ended). For tests that stop the generator mid-trial."""
    import threading
    import time

    from routerlab.testbed import traffic

    done = {}

    def trial():
        try:
            done["r"] = traffic.run_trial(tb, rate_pps, duration_s, traffic.TrafficSpec(), probe_period_ms=None)
        except BaseException as e:  # noqa: BLE001 - raised again in the test's thread
            done["error"] = e

    t = threading.Thread(target=trial)
    t.start()
    try:
        deadline = time.monotonic() + 10
        while not (gen := [p for p in list(tb.procs) if name in " ".join(map(str, p.args))]):
            assert "error" not in done and time.monotonic() < deadline, f"the generator did not start: {done}"
            time.sleep(0.005)
        c = tb.sink_count()
        while tb.sink_count() == c:
            assert time.monotonic() < deadline, "the sink counted none of the generator's frames"
            time.sleep(0.001)
        yield gen[0].pid, done  # ip netns exec and taskset exec it: the same process
    finally:
        t.join(30)
    assert not t.is_alive(), "the trial did not end"
    if "error" in done:
        raise done["error"]
