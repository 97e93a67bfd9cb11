"""Engine bundles (`routerlab engines pack`, `engines install --from`), on a tiny engine
built here from C: a program linked to a library of its own through an absolute search
path, and a script naming its prefix. Packed, installed into another engines folder and
run there with the original gone; every bad bundle refused with nothing installed.

The real engines are packed and installed, and their tests run on that install, by
test_a_bundle_of_the_installed_engines_passes_their_tests (root, the engines built)."""

import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import ROOT, engine_absent
from routerlab.cli import app
from routerlab.engines import builds, bundles
from routerlab.errors import RouterlabError

COMMIT = "fedcba9876543210fedcba9876543210fedcba98"

C_LIB = b'const char *tiny_name(void) { return "tiny router"; }\n'
C_MAIN = (b'#include <stdio.h>\n#include <stdlib.h>\nconst char *tiny_name(void);\n'
          b'int main(void) { const char *h = getenv("TINY_HOME");\n'
          b'  printf("%s %s\\n", tiny_name(), h ? h : TINY_BUILT_IN); return 0; }\n')


def _source(folder: Path, commit=COMMIT) -> builds.Source:
    path = folder / f"tinyc-{commit}.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        for name, data in (("lib.c", C_LIB), ("main.c", C_MAIN)):
            info = tarfile.TarInfo(f"tinyc-{commit}/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return builds.Source("example/tinyc", commit, hashlib.sha256(path.read_bytes()).hexdigest())


def _recipe(src: builds.Source) -> builds.Recipe:
    return builds.Recipe(engine="click", source=src, extra={}, debian=(), binaries={"click": "bin/click"},
                         relocate_env={"TINY_HOME": "{prefix}"}, runtime=("coreutils",), steps=(
        ("configure", "true"),
        # it names its prefix in its code (its data files, as Click's tools do) and its search path
        ("build", "gcc -shared -fPIC -o libtiny.so lib.c && "
                  "gcc -o click main.c -L. -ltiny -Wl,-rpath,{prefix}/lib \"-DTINY_BUILT_IN=\\\"\"{prefix}\"\\\"\""),
        ("install", "install -D -m 755 click {dest}{prefix}/bin/click && "
                    "install -D -m 644 libtiny.so {dest}{prefix}/lib/libtiny.so && "
                    "mkdir -p {dest}{prefix}/share && printf 'prefix=%s\\n' {prefix} > {dest}{prefix}/share/where.txt && "
                    "ln -s ../lib/libtiny.so {dest}{prefix}/bin/libtiny-link.so")))


@pytest.fixture
def tinyc(tmp_path, monkeypatch):
    """The tiny engine built and installed in tmp/engines; returns its recipe."""
    if shutil.which("gcc") is None or shutil.which("patchelf") is None:
        engine_absent("gcc and patchelf (Debian packages gcc, patchelf) are needed to build and relocate")
    sources = tmp_path / "sources"
    sources.mkdir()
    recipe = _recipe(_source(sources))
    monkeypatch.setenv(builds.DIR_VAR, str(tmp_path / "engines"))
    monkeypatch.setenv(builds.SOURCES_VAR, str(sources))
    monkeypatch.delenv("ROUTERLAB_CLICK", raising=False)
    monkeypatch.setattr(builds, "recipes", lambda: {"click": recipe})
    builds.build("click", say=lambda line: None)
    return recipe


def _pack(tmp_path) -> tuple[Path, str]:
    out = tmp_path / "tiny.tar.gz"
    digest, size = bundles.pack(["click"], out, say=lambda line: None)
    assert size == out.stat().st_size and digest == builds.sha256(out)
    return out, digest


def test_packed_installed_elsewhere_and_run_with_the_original_gone(tinyc, tmp_path, monkeypatch):
    old = builds.installed("click")
    out, digest = _pack(tmp_path)
    with tarfile.open(out) as tar:
        m = bundles.read_manifest(tar, out)
    e = m["engines"]["click"]
    assert e["key"] == tinyc.key and e["prefix"] == str(old) and e["commit"] == COMMIT
    assert {"libc6", "coreutils"} <= set(e["packages"])  # from ldd, and from the recipe
    assert set(e["files"]) == {"bin/click", "bin/libtiny-link.so", "lib/libtiny.so", "share/where.txt"}
    assert e["files"]["bin/libtiny-link.so"] == {"link": "../lib/libtiny.so"}
    assert m["platform"] == json.loads(json.dumps(bundles.Platform.here().__dict__))

    monkeypatch.setenv(builds.DIR_VAR, str(tmp_path / "elsewhere" / "under-a-longer-name"))
    lines = []
    done = bundles.install(str(out), sha256=digest, say=lines.append)
    new = done["click"]
    assert new == builds.installed("click") and new.parent == tmp_path / "elsewhere" / "under-a-longer-name"
    shutil.rmtree(old)  # nothing of the original may be needed
    # the program names its build's folder: it runs through a wrapper telling it the new one
    run = subprocess.run([str(new / "bin" / "click")], capture_output=True, text=True)
    assert run.stdout == f"tiny router {new}\n", run.stderr
    real = new / bundles.WRAPPED / "click"
    rpath = subprocess.run(["patchelf", "--print-rpath", str(real)], capture_output=True, text=True).stdout.strip()
    assert rpath == "$ORIGIN/../../lib"
    mine = subprocess.run([str(new / "bin" / "click")], capture_output=True, text=True,
                          env={**os.environ, "TINY_HOME": "/mine"})
    assert mine.stdout == "tiny router /mine\n"  # a value the user set is kept
    assert (new / "share" / "where.txt").read_text() == f"prefix={new}\n"
    assert builds.record("click")["bundle"]["sha256"] == digest
    assert builds.listing()[0]["from"] == f"bundle {digest[:12]}"
    assert builds.describe("click", new / "bin" / "click").endswith(f"(from bundle {digest[:12]})")
    assert not list((new.parent / ".build").glob("*")), "the staging folder is left behind"


def _rewrite(out: Path, change) -> Path:
    """A copy of bundle ``out`` with ``change(name, data) -> data or None`` applied to
    each member's bytes (None drops the member)."""
    bad = out.with_name("bad.tar.gz")
    with tarfile.open(out) as src, tarfile.open(bad, "w:gz") as dst:
        for member in src:
            data = src.extractfile(member).read() if member.isfile() else None
            if data is not None:
                data = change(member.name, data)
                if data is None:
                    continue
                member.size = len(data)
                dst.addfile(member, io.BytesIO(data))
            else:
                dst.addfile(member)
    return bad


def _nothing_installed(tmp_path, monkeypatch):
    """The check that nothing was installed into tmp/target, nor left in its staging."""
    monkeypatch.setenv(builds.DIR_VAR, str(tmp_path / "target"))
    return lambda: builds.installed("click") is None and not [
        p for p in (tmp_path / "target").glob("*") if p.name not in (".build", ".locks")] and not list(
        (tmp_path / "target" / ".build").glob("*"))


def test_a_tampered_truncated_or_foreign_bundle_is_refused_naming_why(tinyc, tmp_path, monkeypatch):
    out, digest = _pack(tmp_path)
    clean = _nothing_installed(tmp_path, monkeypatch)
    key = tinyc.key

    with pytest.raises(RouterlabError, match=f"its SHA-256 is {digest}, not {'0' * 64} \\(--sha256\\): refused"):
        bundles.install(str(out), sha256="0" * 64, say=lambda line: None)
    assert clean()

    tampered = _rewrite(out, lambda n, d: d.replace(b"prefix=", b"prefiX=") if n.endswith("where.txt") else d)
    with pytest.raises(RouterlabError, match=f"{key}/share/where.txt has SHA-256 .* the manifest says .*: refused"):
        bundles.install(str(tampered), say=lambda line: None)
    assert clean()

    short = _rewrite(out, lambda n, d: None if n.endswith("lib/libtiny.so") else d)
    with pytest.raises(RouterlabError, match=f"{key}/lib/libtiny.so is in the manifest but not in the bundle"):
        bundles.install(str(short), say=lambda line: None)
    assert clean()

    truncated = tmp_path / "truncated.tar.gz"
    truncated.write_bytes(out.read_bytes()[: out.stat().st_size // 2])
    with pytest.raises(RouterlabError, match="truncated or corrupted .*nothing installed"):
        bundles.install(str(truncated), say=lambda line: None)
    assert clean()

    def elsewhere(n, d):
        if n != bundles.MANIFEST:
            return d
        m = json.loads(d)
        m["platform"].update(release="11", arch="arm64")
        return json.dumps(m).encode()

    foreign = _rewrite(out, elsewhere)
    with pytest.raises(RouterlabError, match=r"built for \w+ 11 arm64 .*build the engines from source instead"):
        bundles.install(str(foreign), say=lambda line: None)
    assert clean()

    r = CliRunner().invoke(app, ["engines", "install", "--from", "http://127.0.0.1:9/engines.tar.gz"])
    assert r.exit_code == 1 and "a bundle from the network needs its SHA-256 (--sha256)" in r.output
    r = CliRunner().invoke(app, ["engines", "install", "--from", "http://127.0.0.1:9/engines.tar.gz",
                                 "--sha256", digest])
    assert r.exit_code == 1 and "cannot reach http://127.0.0.1:9/engines.tar.gz" in r.output
    errors = [ln for ln in r.output.splitlines() if "error" in ln]
    assert len(errors) == 1 and errors[0] == r.output.strip().splitlines()[-1]  # one line, the last


def test_missing_runtime_packages_without_root_give_the_apt_line(tinyc, tmp_path, monkeypatch):
    out, _ = _pack(tmp_path)
    clean = _nothing_installed(tmp_path, monkeypatch)
    monkeypatch.setattr(builds, "missing_debian", lambda want: ["libtiny-runtime1"] if want else [])
    monkeypatch.setattr(builds.os, "geteuid", lambda: 1000)
    with pytest.raises(RouterlabError, match="runtime packages of the bundle's engines missing: libtiny-runtime1; "
                                             "install them with: sudo apt-get install -y --no-install-recommends "
                                             "libtiny-runtime1"):
        bundles.install(str(out), say=lambda line: None)
    assert clean()


def test_an_install_interrupted_leaves_nothing_installed(tinyc, tmp_path, monkeypatch):
    out, _ = _pack(tmp_path)
    clean = _nothing_installed(tmp_path, monkeypatch)

    def ctrl_c(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(bundles, "_relocate", ctrl_c)  # after unpacking, before the move
    with pytest.raises(KeyboardInterrupt):
        bundles.install(str(out), say=lambda line: None)
    assert clean() and not list((tmp_path / "target" / ".build").glob("*"))


def test_an_engines_folder_with_a_space_is_refused_before_anything(tinyc, tmp_path, monkeypatch):
    out, _ = _pack(tmp_path)
    monkeypatch.setenv(builds.DIR_VAR, str(tmp_path / "my engines"))
    with pytest.raises(RouterlabError, match="has white space in its path, where Click's scripts and p4c break"):
        bundles.install(str(out), say=lambda line: None)
    assert not (tmp_path / "my engines").exists()


def test_a_bundle_that_would_write_outside_its_engine_is_refused(tinyc, tmp_path, monkeypatch):
    out, _ = _pack(tmp_path)
    clean = _nothing_installed(tmp_path, monkeypatch)
    key = tinyc.key

    def manifest(change):
        def edit(n, d):
            if n != bundles.MANIFEST:
                return d
            m = json.loads(d)
            change(m["engines"]["click"])
            return json.dumps(m).encode()
        return _rewrite(out, edit)

    for change, why in (
            (lambda e: e["files"].update({"../../evil": {"sha256": "0" * 64, "mode": 0o644}}), "file '../../evil'"),
            (lambda e: e["files"].update({"/etc/evil": {"sha256": "0" * 64, "mode": 0o644}}), "file '/etc/evil'"),
            (lambda e: e["files"].update({"bin/e": {"link": "/etc"}}), "link bin/e -> '/etc' leaves"),
            (lambda e: e["files"].update({"bin/e": {"link": "../../.."}}), "link bin/e -> '../../..' leaves"),
            (lambda e: e.update(key="../../x"), "key '../../x' is not click-<commit>-<recipe hash>"),
            (lambda e: e["packages"].append("-oAPT::x=y"), "package '-oAPT::x=y' is not a Debian package name")):
        with pytest.raises(RouterlabError, match=f"is not valid: engine click: {why}"):
            bundles.install(str(manifest(change)), say=lambda line: None)
        assert clean()

    # a member the manifest does not list, written as a path from the root
    with tarfile.open(out) as src, tarfile.open(tmp_path / "sneaky.tar.gz", "w:gz") as dst:
        for member in src:
            dst.addfile(member, src.extractfile(member) if member.isfile() else None)
        info = tarfile.TarInfo(f"{key}//tmp/evil-{os.getpid()}")
        info.size = 4
        dst.addfile(info, io.BytesIO(b"evil"))
    with pytest.raises(RouterlabError, match=f"{key}//tmp/evil-{os.getpid()} is not in the bundle's manifest"):
        bundles.install(str(tmp_path / "sneaky.tar.gz"), say=lambda line: None)
    assert clean() and not Path(f"/tmp/evil-{os.getpid()}").exists()


def test_a_bundle_of_another_pin_is_kept_under_its_own_key(tinyc, tmp_path, monkeypatch):
    out, _ = _pack(tmp_path)
    other = _recipe(_source(tmp_path / "sources", commit="1" * 40))
    monkeypatch.setattr(builds, "recipes", lambda: {"click": other})  # this routerlab pins another commit
    monkeypatch.setenv(builds.DIR_VAR, str(tmp_path / "target"))
    lines = []
    done = bundles.install(str(out), say=lines.append)
    assert done["click"].name == tinyc.key != other.key
    assert builds.installed("click") is None  # never taken for the pinned engine
    assert any("another pin than this routerlab's recipe" in ln for ln in lines)
    rows = builds.listing()
    assert [r["installed"] for r in rows] == ["not installed", "another pin"]
    assert rows[1]["commit"] == f"example/tinyc@{COMMIT[:12]}"


def test_pack_and_install_from_the_command_line(tinyc, tmp_path, monkeypatch):
    r = CliRunner().invoke(app, ["engines", "pack", "--out", str(tmp_path / "b.tar.gz")])
    assert r.exit_code == 0, r.output
    digest = builds.sha256(tmp_path / "b.tar.gz")
    assert f"sha256 {digest}" in r.output
    assert f"routerlab engines install --from b.tar.gz --sha256 {digest}" in r.output
    monkeypatch.setenv(builds.DIR_VAR, str(tmp_path / "cli"))
    r = CliRunner().invoke(app, ["engines", "install", "--from", str(tmp_path / "b.tar.gz"), "--sha256", digest])
    assert r.exit_code == 0, r.output
    assert "installed 1 engine(s)" in r.output
    r = CliRunner().invoke(app, ["engines", "list"])
    assert f"bundle {digest[:12]}" in r.output


def test_install_takes_an_engine_from_the_bundles_folder_only_under_its_key(tinyc, tmp_path, monkeypatch):
    """`engines install` with $ROUTERLAB_ENGINE_BUNDLES: an engine a bundle there holds under
    the key it would build comes from it (checked against the .sha256 beside it); once its
    recipe changed, the same bundle is passed over and the engine is built, the log saying
    which came from where."""
    folder = tmp_path / "bundles"
    folder.mkdir()
    out, digest = _pack(tmp_path)
    shutil.move(out, folder / out.name)
    (folder / (out.name + ".sha256")).write_text(f"{digest}  {out.name}\n")
    (folder / "unhashed.tar.gz").write_bytes(b"not even a bundle")
    monkeypatch.setenv(bundles.FOLDER_VAR, str(folder))
    monkeypatch.setenv(builds.DIR_VAR, str(tmp_path / "new-machine"))
    r = CliRunner().invoke(app, ["engines", "install", "click"])
    assert r.exit_code == 0, r.output
    assert f"click: from the bundle {folder / out.name}" in r.output
    assert "unhashed.tar.gz: no unhashed.tar.gz.sha256 beside it: not used" in r.output
    assert "building" not in r.output
    assert builds.record("click")["bundle"]["sha256"] == digest

    # a wrong hash beside it is refused, naming the bundle
    monkeypatch.setenv(builds.DIR_VAR, str(tmp_path / "third-machine"))
    (folder / (out.name + ".sha256")).write_text("0" * 64 + "\n")
    r = CliRunner().invoke(app, ["engines", "install", "click"])
    assert r.exit_code == 1 and f"{out.name}: its SHA-256 is {digest}" in r.output
    assert builds.installed("click") is None
    (folder / (out.name + ".sha256")).write_text(f"{digest}  {out.name}\n")

    changed = builds.Recipe(**{**tinyc.__dict__, "steps": tinyc.steps + (("install", "true"),)})
    monkeypatch.setattr(builds, "recipes", lambda: {"click": changed})
    monkeypatch.setenv(builds.DIR_VAR, str(tmp_path / "after-a-change"))
    r = CliRunner().invoke(app, ["engines", "install", "click"])
    assert r.exit_code == 0, r.output
    assert f"click: no bundle in {folder} holds {changed.key} ({out.name} holds it as {tinyc.key}: " \
           "another pin or recipe): building it" in r.output
    assert builds.record("click").get("bundle") is None  # built, not unpacked


def test_a_bundles_folder_that_is_not_one_is_named(tmp_path, monkeypatch):
    monkeypatch.setenv(bundles.FOLDER_VAR, str(tmp_path / "nowhere"))
    with pytest.raises(RouterlabError, match=f"ROUTERLAB_ENGINE_BUNDLES={tmp_path / 'nowhere'}: no such folder"):
        bundles.from_folder(["click"])


# -- the real engines ---------------------------------------------------------------------

#: The tests each engine's bundle install is checked with.
ENGINE_TESTS = ["tests/test_click.py", "tests/test_microbench.py", "tests/test_p4.py", "tests/test_vpp.py"]


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0, reason="needs root: the engines' tests use network namespaces")
def test_a_bundle_of_the_installed_engines_passes_their_tests(tmp_path):
    """Pack the installed engines, install the bundle into another folder, hide the
    original engines folder (a tmpfs over it, in a mount namespace of the test's own), and
    run the engines' tests there."""
    names = list(builds.recipes())
    missing = [n for n in names if builds.installed(n) is None]
    if missing:
        engine_absent(f"not installed: {', '.join(missing)} (routerlab engines install)")
    out = tmp_path / "engines.tar.gz"
    digest, size = bundles.pack(names, out, say=lambda line: None)
    target = tmp_path / "home" / "a-student" / ".local" / "share" / "routerlab" / "engines"
    env = {**os.environ, builds.DIR_VAR: str(target), "ROUTERLAB_REQUIRE_ENGINES": "1"}
    p = subprocess.run([sys.executable, "-m", "routerlab.cli", "engines", "install", "--from", str(out),
                        "--sha256", digest], env=env, capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    original = builds.engines_dir()
    hide = f"mount -t tmpfs routerlab-hidden {shlex_quote(str(original))}"
    run = f"{hide} && exec {shlex_quote(sys.executable)} -m pytest -q -x -p no:cacheprovider " + " ".join(ENGINE_TESTS)
    p = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", run], cwd=ROOT, env=env,
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-2000:]
    assert " passed" in p.stdout and "skipped" not in p.stdout.splitlines()[-1]


def shlex_quote(s: str) -> str:
    import shlex

    return shlex.quote(s)


def test_dpdks_drivers_loaded_at_run_time_are_installed_with_it():
    """ldd cannot see what DPDK's EAL loads from its driver folder: a bundle whose engine
    links the EAL brings the drivers fastclick-dpdk uses (af_xdp for the veth links, the
    ring mempool for its packets), of the EAL's version, and nothing is added where no
    such library is linked."""
    assert bundles.with_loaded(["libc6", "librte-eal23"]) == ["libc6", "librte-eal23", "librte-mempool-ring23",
                                                              "librte-net-af-xdp23"]
    assert bundles.with_loaded(["librte-eal24"]) == ["librte-eal24", "librte-mempool-ring24", "librte-net-af-xdp24"]
    assert bundles.with_loaded(["libc6", "librte-ethdev23"]) == ["libc6", "librte-ethdev23"]


@pytest.mark.skipif(not Path("/usr/lib/x86_64-linux-gnu/librte_eal.so.23").exists(),
                    reason="DPDK 23's EAL (librte-eal23) is not installed here")
@pytest.mark.parametrize("driver", ["librte_net_af_xdp.so.23", "librte_mempool_ring.so.23"])
def test_the_drivers_a_bundle_adds_are_those_dpdk_loads(driver):
    """The package names the rule adds are those Debian ships the drivers in."""
    p = subprocess.run(["dpkg", "-S", driver], capture_output=True, text=True)
    assert p.returncode == 0, f"DPDK's {driver} is not installed: fastclick-dpdk cannot run"
    assert p.stdout.split(":")[0] in bundles.with_loaded(["librte-eal23"])


def test_an_engine_installed_from_a_bundle_packs_into_a_bundle_that_installs_and_runs_elsewhere(
        tinyc, tmp_path, monkeypatch):
    """A machine that took its engines from a bundle can pack them again (the SSH testbed
    carries them to its router host that way): the new bundle holds the programs as they
    were built, not the wrappers of the first install, and installs and runs a third place."""
    built = builds.installed("click")
    out, digest = _pack(tmp_path)
    monkeypatch.setenv(builds.DIR_VAR, str(tmp_path / "second"))
    second = bundles.install(str(out), sha256=digest, say=lambda line: None)["click"]
    shutil.rmtree(built)
    again = tmp_path / "again.tar.gz"
    digest2, _ = bundles.pack(["click"], again, say=lambda line: None)
    with tarfile.open(again) as tar:
        e = bundles.read_manifest(tar, again)["engines"]["click"]
    assert set(e["files"]) == {"bin/click", "bin/libtiny-link.so", "lib/libtiny.so", "share/where.txt"}
    assert e["prefix"] == str(built)  # where the programs were built, which they still name
    monkeypatch.setenv(builds.DIR_VAR, str(tmp_path / "third" / "further"))
    third = bundles.install(str(again), sha256=digest2, say=lambda line: None)["click"]
    shutil.rmtree(second)
    run = subprocess.run([str(third / "bin" / "click")], capture_output=True, text=True)
    assert run.stdout == f"tiny router {third}\n", run.stderr
    assert (third / "share" / "where.txt").read_text() == f"prefix={third}\n"


def test_bench_install_prints_the_bundles_install_next_to_its_floor():
    """`bench install` on the folder of bundles beside the clone: every engine they hold
    installed into an empty folder (the one in use untouched), its time next to tar's."""
    folder = ROOT.parent / "shared" / "engine-bundles"
    if not list(folder.glob("*.tar.gz.sha256")):
        pytest.skip(f"no bundles beside their .sha256 in {folder}")
    before = sorted(p.name for p in builds.engines_dir().glob("*")) if builds.engines_dir().is_dir() else []
    r = subprocess.run([sys.executable, "-m", "routerlab.cli", "bench", "install", "--bundles", str(folder)],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
    line = r.stdout.strip().splitlines()[-1]
    m = re.search(r": ([\d.]+) s; floor \(tar -xzf of the same\): ([\d.]+) s; ratio ([\d.]+); target: under 120 s", line)
    assert m, line
    install_s, tar_s, ratio = map(float, m.groups())
    # the times are printed to 0.1 s, the ratio of the unrounded ones to 0.01
    assert (install_s - 0.05) / (tar_s + 0.05) - 0.005 <= ratio <= (install_s + 0.05) / max(tar_s - 0.05, 1e-9) + 0.005
    assert install_s >= tar_s > 0
    assert (sorted(p.name for p in builds.engines_dir().glob("*")) if builds.engines_dir().is_dir() else []) == before
