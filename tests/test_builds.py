"""`routerlab engines install`'s own logic, on a tiny source tarball made here: pins,
cache hit, refusal of a bad hash, failed and interrupted builds leave nothing installed,
the lock, and finding what was installed. The real builds are exercised by the engine
tests (test_click, test_p4, ...) that run on what `routerlab engines install` built."""

import csv
import dataclasses
import hashlib
import http.server
import io
import os
import re
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from conftest import ROOT, tiny_tarball

from routerlab import engines
from routerlab.engines import builds
from routerlab.errors import BuildFailed, DataFormatError, EngineNotFound, ParameterError, RouterlabError

COMMIT = "0123456789abcdef0123456789abcdef01234567"
SHARED_SOURCES = ROOT.parent / "shared" / "engine-sources"


def make_tarball(folder: Path, repo="example/tiny", commit=COMMIT) -> builds.Source:
    """GitHub's archive layout: top folder <repo>-<commit>/ with a tiny program."""
    _, digest = tiny_tarball(folder, repo, commit)
    return builds.Source(repo, commit, digest)


def tiny_recipe(src: builds.Source, build_step="true", engine="click") -> builds.Recipe:
    return builds.Recipe(engine=engine, source=src, extra={}, debian=(), binaries={"click": "bin/click"}, steps=(
        ("configure", "test -x tiny.sh"),
        ("build", build_step),
        ("install", "install -D -m 755 tiny.sh {dest}{prefix}/bin/click")))


@pytest.fixture
def tiny(tmp_path, monkeypatch):
    """An engines folder, a sources folder with the tiny tarball, and `click` pinned to it."""
    sources = tmp_path / "sources"
    sources.mkdir()
    src = make_tarball(sources)
    monkeypatch.setenv(builds.DIR_VAR, str(tmp_path / "engines"))
    monkeypatch.setenv(builds.SOURCES_VAR, str(sources))
    monkeypatch.delenv("ROUTERLAB_CLICK", raising=False)
    pinned = {"click": tiny_recipe(src)}
    monkeypatch.setattr(builds, "recipes", lambda: pinned)
    return pinned


def quiet(_line):
    pass


# -- the pins ----------------------------------------------------------------------------

def test_every_engine_is_pinned_to_a_full_commit_and_hash():
    rs = builds.recipes()
    assert list(rs) == ["click", "fastclick", "bmv2", "bmv2-log", "p4c", "vpp"]
    for r in rs.values():
        for s in [r.source, *r.extra.values()]:
            assert re.fullmatch("[0-9a-f]{40}", s.commit) and re.fullmatch("[0-9a-f]{64}", s.sha256)
        # the three stages, and one named after an extra source built on its own (bmv2's PI)
        stages = {stage for stage, _ in r.steps}
        assert r.binaries and {"configure", "build", "install"} <= stages <= {"configure", "build", "install", *r.extra}
    assert rs["p4c"].extra["p4runtime"].commit.startswith("1e771c4e05c4")
    assert "{extra.p4runtime}" in " ".join(c for _, c in rs["p4c"].steps)
    assert rs["click"].source.url == f"https://github.com/kohler/click/archive/{rs['click'].source.commit}.tar.gz"


def test_pins_match_the_offline_mirror():
    table = SHARED_SOURCES / "SOURCES.tsv"
    if not table.is_file():
        pytest.skip(f"no offline mirror of the engine sources at {SHARED_SOURCES}")
    mirror = {row["file"]: (row["commit"], row["sha256"]) for row in csv.DictReader(table.open(), delimiter="\t")}
    for r in builds.recipes().values():
        for s in [r.source, *r.extra.values()]:
            assert mirror[s.file] == (s.commit, s.sha256)


def test_the_key_changes_with_the_recipe(tmp_path):
    src = make_tarball(tmp_path)
    a, b = tiny_recipe(src), tiny_recipe(src, build_step="make -j{jobs}")
    assert a.key != b.key and a.key.startswith("click-0123456789ab-")


def test_unknown_engine_is_refused_with_the_known_ones():
    with pytest.raises(ParameterError, match="known: click, fastclick, bmv2, bmv2-log, p4c, vpp"):
        builds.recipe("dpdk")
    p = subprocess.run([sys.executable, "-m", "routerlab.cli", "engines", "install", "dpdk"],
                       capture_output=True, text=True)
    assert p.returncode == 2 and "known: click, fastclick, bmv2, bmv2-log, p4c, vpp" in p.stderr


def test_install_starts_builds_in_the_order_the_yaml_gives(monkeypatch):
    """install_order of engine-builds.yaml (the longest build first) is not a recipe."""
    assert builds.install_order() == ["p4c", "vpp", "bmv2", "bmv2-log", "fastclick", "click"]
    started = []
    monkeypatch.setattr(builds, "install_packages", lambda names, say: None)
    monkeypatch.setattr(builds, "build", lambda name, **kw: started.append(name) or Path(name))
    builds.install(["click", "fastclick", "bmv2", "bmv2-log", "p4c", "vpp"], say=quiet, parallel=1)
    assert started == builds.install_order()


def test_a_malformed_install_order_names_the_file(monkeypatch):
    path, raw = builds._builds_file()
    monkeypatch.setattr(builds, "_builds_file", lambda: (path, {**raw, builds.ORDER: ["p4c", "click", "dpdk"]}))
    builds.install_order.cache_clear()
    try:
        with pytest.raises(DataFormatError, match=r"engine-builds.yaml.*install_order: expected a list naming"):
            builds.install_order()
    finally:
        builds.install_order.cache_clear()


# -- installing --------------------------------------------------------------------------

def test_install_then_a_second_install_is_a_cache_hit(tiny):
    lines = []
    prefix = builds.build("click", say=lines.append)
    assert (prefix / "bin/click").is_file() and builds.installed("click") == prefix
    assert builds.record("click")["commit"] == COMMIT
    assert any("configure done" in ln for ln in lines) and any("log:" in ln for ln in lines)
    logs = sorted((builds.engines_dir() / ".logs").iterdir())
    t = time.monotonic()
    lines.clear()
    assert builds.build("click", say=lines.append) == prefix
    assert time.monotonic() - t < 1
    assert lines == [f"click: installed (example/tiny@{COMMIT[:12]}) in {prefix}"]
    assert sorted((builds.engines_dir() / ".logs").iterdir()) == logs  # nothing was built
    assert not (builds.engines_dir() / ".build").exists() or not any((builds.engines_dir() / ".build").iterdir())


def test_installed_engine_is_found_without_path_or_variables(tiny, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    with pytest.raises(EngineNotFound, match="routerlab engines install click"):
        engines.find_binary("click", "click")
    prefix = builds.build("click", say=quiet)
    found = engines.find_binary("click", "click")
    assert found == str(prefix / "bin/click")
    assert builds.describe("click", found) == f"example/tiny@{COMMIT[:12]}"
    own = tmp_path / "own-click"
    own.write_text("#!/bin/sh\n")
    own.chmod(0o755)
    monkeypatch.setenv("ROUTERLAB_CLICK", str(own))  # the variable wins
    assert engines.find_binary("click", "click") == str(own)
    assert builds.describe("click", own) == f"own build {own} ($ROUTERLAB_CLICK)"


def test_a_tarball_with_another_hash_is_refused_naming_both(tiny, tmp_path):
    good = tiny["click"].source.sha256
    tarball = Path(os.environ[builds.SOURCES_VAR]) / tiny["click"].source.file
    with open(tarball, "ab") as f:
        f.write(b"tampered")
    with pytest.raises(RouterlabError) as e:
        builds.build("click", say=quiet)
    bad = hashlib.sha256(tarball.read_bytes()).hexdigest()
    assert f"its sha256 is {bad}, the pin says {good}" in str(e.value)
    assert builds.installed("click") is None


def test_a_missing_tarball_names_the_folder_and_the_variable(tiny, monkeypatch, tmp_path):
    monkeypatch.setenv(builds.SOURCES_VAR, str(tmp_path))
    with pytest.raises(RouterlabError, match=rf"tiny-{COMMIT}.tar.gz not found in .*ROUTERLAB_ENGINE_SOURCES"):
        builds.build("click", say=quiet)


def test_no_network_and_no_sources_names_the_url_and_the_variable(tiny, monkeypatch):
    monkeypatch.delenv(builds.SOURCES_VAR)
    # a port nothing listens on: the download fails as it does offline
    monkeypatch.setattr(builds.Source, "url", property(lambda s: "http://127.0.0.1:9/tiny.tar.gz"))
    with pytest.raises(RouterlabError, match=r"could not download http://127.0.0.1:9/tiny.tar.gz .*"
                                             r"set ROUTERLAB_ENGINE_SOURCES"):
        builds.build("click", say=quiet)
    assert not list((builds.engines_dir() / ".sources").glob("*"))


def test_a_failed_build_shows_the_log_tail_and_installs_nothing(tiny, monkeypatch):
    src = tiny["click"].source
    tiny["click"] = tiny_recipe(src, build_step="echo compiling foo.cc; echo 'foo.cc:1: error: boom' >&2; exit 1")
    with pytest.raises(BuildFailed) as e:
        builds.build("click", say=quiet)
    msg = str(e.value)
    assert "click: build failed" in msg and "foo.cc:1: error: boom" in msg and "full log: " in msg
    assert Path(msg.rsplit("full log: ", 1)[1].strip()).is_file()
    assert builds.installed("click") is None
    assert not list((builds.engines_dir() / ".build").iterdir())


def test_missing_build_packages_give_the_apt_line(tiny, monkeypatch):
    if not Path("/usr/bin/dpkg-query").exists():
        pytest.skip("dpkg-query not found: not a Debian machine")
    r = tiny["click"]
    tiny["click"] = builds.Recipe(r.engine, r.source, r.extra, ("routerlab-no-such-package", "coreutils"),
                                  r.steps, r.binaries)
    monkeypatch.setattr(builds.os, "geteuid", lambda: 1000)
    monkeypatch.setattr(builds.sys, "stdin", io.StringIO())  # no terminal: sudo could not ask
    with pytest.raises(RouterlabError, match="sudo apt-get install -y --no-install-recommends routerlab-no-such-package$"):
        builds.install(["click"], say=quiet)


def _install_in_subprocess(tmp_path, tiny, build_step, url=None) -> subprocess.Popen:
    """`builds.install` of the tiny engine in a process of its own (to interrupt it), with
    the fixture's recipe but ``build_step`` (set in ``tiny`` too, so both see one key);
    with ``url``, its tarball is downloaded from there."""
    src = tiny["click"].source
    tiny["click"] = tiny_recipe(src, build_step=build_step)
    env = os.environ.copy()
    if url:
        env.pop(builds.SOURCES_VAR)
    # The child stands for routerlab in a terminal, where Ctrl-C raises KeyboardInterrupt. A
    # test run started in the background (`make test &`, nohup) hands its children SIGINT
    # ignored, and Python then installs no KeyboardInterrupt: the child puts it back.
    code = textwrap.dedent(f"""
        import signal, sys
        signal.signal(signal.SIGINT, signal.default_int_handler)
        from routerlab.engines import builds
        r = builds.Recipe(engine="click", source=builds.Source({src.repository!r}, {src.commit!r}, {src.sha256!r}),
                          extra={{}}, debian=(), binaries={{"click": "bin/click"}}, steps={tiny["click"].steps!r})
        builds.recipes = lambda: {{"click": r}}
        if {url!r}:
            builds.Source.url = property(lambda s: {url!r})
        try:
            res = builds.install(["click"], say=print)
        except KeyboardInterrupt:
            sys.exit(130)
        sys.exit(0 if not isinstance(res["click"], Exception) else 1)
    """)
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, env=env)


def _wait_for(path: Path, timeout=20):
    t = time.monotonic()
    while not path.exists():
        assert time.monotonic() - t < timeout, f"{path} never appeared"
        time.sleep(0.05)


@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGKILL])
def test_an_interrupted_build_leaves_nothing_installed(tiny, tmp_path, how):
    started = tmp_path / "started"
    nap = f"{30 + how / 1000:.3f}"  # a sleep no other process on the machine has
    p = _install_in_subprocess(tmp_path, tiny, f"touch {started}; sleep {nap}; true")
    _wait_for(started)
    p.send_signal(how)
    p.wait(timeout=20)
    assert p.returncode == (130 if how == signal.SIGINT else -signal.SIGKILL)
    key = tiny["click"].key
    assert builds.installed("click") is None and not (builds.engines_dir() / key).exists()
    build_dir = builds.engines_dir() / ".build" / key
    if how == signal.SIGINT:  # routerlab cleans up itself; after kill -9, the next install does
        assert not build_dir.exists()
    else:
        assert build_dir.exists()
    time.sleep(0.5)  # the step's process group dies with its parent
    left = subprocess.run(["pgrep", "-f", f"sleep {nap}"], capture_output=True, text=True).stdout
    assert left == ""
    # the next install (here of the plain recipe) clears what was left and succeeds
    tiny["click"] = tiny_recipe(tiny["click"].source)
    assert builds.build("click", say=quiet) == builds.installed("click")
    assert not build_dir.exists()


class _Trickle(http.server.BaseHTTPRequestHandler):
    """A 10 MB tarball sent 1 KiB every 50 ms: its download would take minutes."""

    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Length", str(10 << 20))
        self.end_headers()
        try:
            for _ in range(10 << 10):
                self.wfile.write(b"\0" * 1024)
                self.wfile.flush()
                time.sleep(0.05)
        except OSError:  # the client went away
            pass

    def log_message(self, *args):
        pass


@pytest.fixture
def slow_url():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Trickle)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/tiny-{COMMIT}.tar.gz"
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGKILL])
def test_an_interrupted_download_stops_at_once(tiny, tmp_path, slow_url, how):
    """Ctrl-C stops a download at once and leaves no part of it; after kill -9 the download
    dies with routerlab, and nothing half-downloaded counts as the tarball."""
    p = _install_in_subprocess(tmp_path, tiny, "true", url=slow_url)
    sources = builds.engines_dir() / ".sources"
    t = time.monotonic()
    while not list(sources.glob("*.part")):
        assert time.monotonic() - t < 20 and p.poll() is None, "the download never started"
        time.sleep(0.05)
    t = time.monotonic()
    p.send_signal(how)
    p.wait(timeout=20)
    assert time.monotonic() - t < 5
    assert p.returncode == (130 if how == signal.SIGINT else -signal.SIGKILL)
    time.sleep(0.5)  # a downloader left to itself would still be reading
    assert subprocess.run(["pgrep", "-f", slow_url], capture_output=True, text=True).stdout == ""
    left = sorted(f.name for f in sources.iterdir())
    assert left == ([] if how == signal.SIGINT else [f"tiny-{COMMIT}.tar.part"])
    assert builds.installed("click") is None


def test_two_installs_at_once_build_once(tiny, tmp_path):
    count = tmp_path / "built"
    tiny["click"] = tiny_recipe(tiny["click"].source, build_step=f"echo x >> {count}; sleep 1")
    lines: list[str] = []
    results = []
    threads = [threading.Thread(target=lambda: results.append(builds.build("click", say=lines.append)))
               for _ in range(2)]
    for t in threads:
        t.start()
        time.sleep(0.2)
    for t in threads:
        t.join()
    assert count.read_text() == "x\n"
    assert results[0] == results[1] == builds.installed("click")
    assert any("another install is running" in ln for ln in lines)


def test_remove_and_list(tiny):
    assert builds.listing()[0]["installed"] == "not installed"
    prefix = builds.build("click", say=quiet)
    row = builds.listing()[0]
    assert row["installed"] == "installed" and row["prefix"] == str(prefix)
    assert row["commit"] == f"example/tiny@{COMMIT[:12]}" and row["from"] == "source build"
    assert builds.remove(["click"], say=quiet) == [prefix]
    assert builds.installed("click") is None and not prefix.exists()


def test_doctor_exits_non_zero_when_an_engine_asked_for_is_missing(tmp_path):
    env = {**os.environ, builds.DIR_VAR: str(tmp_path / "empty"), "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}
    env.pop("ROUTERLAB_CLICK", None)
    doctor = [sys.executable, "-m", "routerlab.cli", "doctor"]
    p = subprocess.run(doctor + ["click"], capture_output=True, text=True, env=env)
    assert p.returncode == 1 and "routerlab engines install click" in p.stdout and "missing: click" in p.stderr
    assert subprocess.run(doctor + ["linux"], capture_output=True, text=True, env=env).returncode == 0
    # the whole report names our C programs, built: the generator and the CPU-stop probe
    p = subprocess.run(doctor, capture_output=True, text=True, env=env)
    assert re.search(r"rlgen +ok +rlgen [0-9a-f]{12}", p.stdout) and re.search(r"rlstop +ok +rlstop [0-9a-f]{12}", p.stdout)
    p = subprocess.run(doctor + ["vpp"], capture_output=True, text=True, env=env)
    assert p.returncode == 1 and "routerlab engines install vpp" in p.stdout and "missing: vpp" in p.stderr
    p = subprocess.run(doctor + ["dpdk"], capture_output=True, text=True, env=env)
    assert p.returncode == 2 and "nothing called dpdk" in p.stderr


# -- patches a recipe carries --------------------------------------------------------------

def _patches(tmp_path, monkeypatch, text: str) -> str:
    """A patch file named tiny.patch in a patches folder standing for data/patches/."""
    folder = tmp_path / "patches"
    folder.mkdir(exist_ok=True)
    (folder / "tiny.patch").write_text(text)
    monkeypatch.setattr(builds, "patch_file", lambda name: folder / name)
    return "tiny.patch"


TINY_PATCH = """A note on what and why, above the diff, as the recipe's patches have.

--- a/tiny.sh
+++ b/tiny.sh
@@ -1,2 +1,2 @@
 #!/bin/sh
-echo tiny router
+echo patched router
"""


def test_a_patch_is_applied_before_the_steps_and_is_part_of_the_key(tiny, tmp_path, monkeypatch):
    src = tiny["click"].source
    plain = tiny_recipe(src)
    tiny["click"] = patched = dataclasses.replace(plain, patches=(_patches(tmp_path, monkeypatch, TINY_PATCH),))
    assert patched.key != plain.key
    prefix = builds.build("click", say=quiet)
    assert prefix.name == patched.key
    assert subprocess.run([prefix / "bin/click"], capture_output=True, text=True).stdout == "patched router\n"
    # another text of the same patch is another install
    _patches(tmp_path, monkeypatch, TINY_PATCH.replace("patched router", "other router"))
    assert patched.key != prefix.name


def test_a_patch_that_does_not_apply_fails_the_build_naming_it(tiny, tmp_path, monkeypatch):
    name = _patches(tmp_path, monkeypatch, TINY_PATCH.replace("-echo tiny router", "-echo another router"))
    tiny["click"] = dataclasses.replace(tiny_recipe(tiny["click"].source), patches=(name,))
    with pytest.raises(BuildFailed, match="click: patch tiny.patch does not apply"):
        builds.build("click", say=quiet)
    assert builds.installed("click") is None


def test_a_recipe_naming_a_missing_patch_is_refused(monkeypatch):
    path, raw = builds._builds_file()
    broken = {**raw, "click": {**raw["click"], "patches": ["no-such.patch"]}}
    monkeypatch.setattr(builds, "_builds_file", lambda: (path, broken))
    builds.recipes.cache_clear()
    try:
        with pytest.raises(DataFormatError, match="engine click: no patch no-such.patch in data/patches"):
            builds.recipes()
    finally:
        builds.recipes.cache_clear()


def test_a_build_clears_its_own_leftovers_not_another_engines(tiny):
    """bmv2's build must not remove bmv2-log's build under way: only folders named
    <engine>-<commit12>-<hash8> of this engine are leftovers."""
    build = builds.engines_dir() / ".build"
    mine, other = build / "click-0123456789ab-deadbeef", build / "click-log-0123456789ab-01234567"
    for d in (mine, other):
        d.mkdir(parents=True)
    builds.build("click", say=quiet)
    assert not mine.exists() and other.is_dir()
