"""Pinned downloads (routerlab.analysis.pinned): the registries, the cache folder, and the
download's two failures told apart, the same way for every reader."""

import hashlib

import pytest

from routerlab.analysis import moonroute, pastrami, pinned
from routerlab.errors import DataFormatError, DataUnavailable


def test_a_registry_skips_comments_and_keeps_a_reader_s_own_fields():
    sha = "sha256:" + "ab" * 32
    text = f"# a comment\n\na.txt {sha}\n  # indented comment\nb.txt {sha} misure.zip:m/b.txt\n"
    assert pinned.parse_registry(text, "reg.txt") == [["a.txt", sha], ["b.txt", sha, "misure.zip:m/b.txt"]]


@pytest.mark.parametrize("line", ["a.txt", "a.txt sha256:1234", "a.txt md5:" + "0" * 32])
def test_a_malformed_registry_line_is_one_line_naming_file_and_line(line):
    with pytest.raises(DataFormatError) as e:
        pinned.parse_registry(f"# pins\nok.txt sha256:{'0' * 64}\n{line}\n", "lib/routerlab/data/x-registry.txt")
    assert str(e.value) == "lib/routerlab/data/x-registry.txt:3: expected a path and its sha256:<64 hex digits>"


def test_both_readers_read_their_registry_through_it():
    # PASTRAMI's has comment lines and a third field; MoonRoute's, two fields a line
    assert len(pastrami.registry()) == 108 and len(pastrami.archived()) == 7
    assert moonroute.registry() and all(v.startswith("sha256:") for v in moonroute.registry().values())
    assert pastrami._cache_dir().name == f"pastrami-{pastrami.PASTRAMI_COMMIT[:12]}"
    assert moonroute._cache_dir().name == f"moonroute-{moonroute.COMMIT[:12]}"
    assert pastrami._cache_dir().parent == moonroute._cache_dir().parent


def test_a_download_is_fetched_once_and_its_failures_are_told_apart(served, tmp_path):
    root, url = served
    (root / "d").mkdir()
    (root / "d" / "f.txt").write_text("pinned\n")
    good = "sha256:" + hashlib.sha256(b"pinned\n").hexdigest()
    where = dict(what="X data", where="someone/x@1234567", env_dir="ROUTERLAB_X_DIR")
    seen = []
    assert pinned.fetch({"d/f.txt": good}, url, tmp_path / "c", progress=seen.append, **where) == tmp_path / "c"
    assert (tmp_path / "c" / "d" / "f.txt").read_text() == "pinned\n"
    assert [(s.done, s.total) for s in seen] == [(0, 1), (1, 1)]
    assert pinned.missing(["d/f.txt", "d/g.txt"], tmp_path / "c") == ["d/g.txt"]
    # not the pinned file: pooch refuses it
    with pytest.raises(DataUnavailable) as e:
        pinned.fetch({"d/f.txt": "sha256:" + "0" * 64}, url, tmp_path / "other", **where)
    assert str(e.value) == ("X data: d/f.txt from someone/x@1234567 is not the file pinned in routerlab's registry "
                            "(its SHA-256 differs); set ROUTERLAB_X_DIR to a good copy")
    assert not (tmp_path / "other" / "d" / "f.txt").exists()
    # not there at all: a download that failed
    with pytest.raises(DataUnavailable) as e:
        pinned.fetch({"d/none.txt": good}, url, tmp_path / "other", **where)
    assert str(e.value) == ("X data: cannot download d/none.txt from someone/x@1234567 (HTTPError); "
                            "offline? set ROUTERLAB_X_DIR to a local copy")
