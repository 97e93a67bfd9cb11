"""Which routerlab is running: the installed version, a clone's release and commit, and the
release the notebooks install (routerlab.version)."""

import shutil
import subprocess
from importlib import metadata

import pytest

import routerlab
from routerlab import version
from routerlab.errors import RouterlabError


@pytest.fixture
def fresh_version():
    """installed_version read again in the test, and again after it."""
    version.installed_version.cache_clear()
    yield
    version.installed_version.cache_clear()


def test_the_version_is_the_installed_metadata_or_says_it_is_not_installed(monkeypatch, fresh_version):
    assert routerlab.__version__ == version.installed_version() == metadata.version("routerlab")

    def absent(name):
        raise metadata.PackageNotFoundError(name)

    version.installed_version.cache_clear()
    monkeypatch.setattr(metadata, "version", absent)
    assert routerlab.__version__ == version.NOT_INSTALLED == "0+unknown"
    with pytest.raises(AttributeError, match="no attribute 'version_info'"):
        routerlab.version_info  # noqa: B018 - only __version__ is made on demand


def test_a_clone_names_its_last_release_tag_and_its_commit(tmp_path, fresh_version):
    """Without a tag, the installed version; with tags, the last release tag HEAD descends
    from (not a later tag on another branch), as every record names it: ``0.1.0 (git abc1234)``."""
    if shutil.which("git") is None:
        pytest.skip("no git")

    def git(*args):
        return subprocess.run(["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@example.org",
                               *args], check=True, capture_output=True, text=True).stdout.strip()

    git("init", "-q")
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "a.py").write_text("x = 1\n")
    git("add", "lib")
    git("commit", "-qm", "one")
    head = git("rev-parse", "--short=7", "HEAD")
    assert version.code_version(tmp_path) == f"{version.installed_version()} (git {head})"
    git("tag", "v0.1.0")
    git("tag", "not-a-release")
    assert version.code_version(tmp_path) == f"0.1.0 (git {head})"
    git("checkout", "-qb", "other")
    (tmp_path / "lib" / "a.py").write_text("x = 2\n")
    git("commit", "-qam", "two")
    git("tag", "v0.2.0")
    git("checkout", "-q", "-")
    assert version.code_version(tmp_path) == f"0.1.0 (git {head})"
    (tmp_path / "lib" / "a.py").write_text("x = 3\n")
    assert version.code_version(tmp_path) == f"0.1.0 (git {head} + uncommitted changes)"


def test_the_release_is_citation_cffs_in_a_clone_and_the_installed_ones_outside(tmp_path, monkeypatch,
                                                                                 fresh_version):
    (tmp_path / "CITATION.cff").write_text('cff-version: 1.2.0\nversion: "2.3.4"\n')
    monkeypatch.setattr(version, "repo_root", lambda: tmp_path)
    assert version.release() == "2.3.4"
    (tmp_path / "CITATION.cff").write_text("cff-version: 1.2.0\nversion: soon\n")
    with pytest.raises(RouterlabError, match=r"CITATION.cff: version must be the release's number.*'soon'"):
        version.release()
    monkeypatch.setattr(version, "repo_root", lambda: None)
    monkeypatch.setattr(metadata, "version", lambda name: "0.1.0.post1.dev3+g1a2b3c4")
    version.installed_version.cache_clear()
    assert version.release() == "0.1.0"  # built three commits after v0.1.0

    def absent(name):
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "version", absent)
    version.installed_version.cache_clear()
    with pytest.raises(RouterlabError, match="neither installed nor in a clone"):
        version.release()


def test_this_clone_names_the_release_of_citation_cff():
    import yaml

    root = version.repo_root()
    if root is None:
        pytest.skip("not run from a clone")
    assert version.release() == str(yaml.safe_load((root / "CITATION.cff").read_text())["version"])
