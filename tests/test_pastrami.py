"""routerlab.analysis.pastrami: the raw format, file names, the published set, and real verdicts."""

import hashlib
import json
import logging
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

from conftest import ROOT, write_raw
from routerlab.analysis import pastrami, stats
from routerlab.errors import DataFormatError, DataUnavailable


def test_parse_name_reads_every_part_of_the_setup():
    s = pastrami.parse_name("bare-metal/confronto_clab/"
                            "clab_tb3_raw_50_exp_t_20_k5.18_intel_bare-metal_nic_buf_4096_irq_pf0-4_pf1-6.txt")
    assert s["testbed"] == "tb3" and s["location"] == "CloudLab" and s["environment"] == "bare-metal"
    assert s["kernel"] == "5.18" and s["runs_planned"] == 50 and s["trial_duration_s"] == 20
    assert s["nic_ring"] == "large" and s["nic_ring_size"] == 4096
    assert s["pinning"] == "2cpu" and s["irq"] == "pf0-4_pf1-6" and s["experiment_class"] == "routing"


def test_parse_name_defaults_and_variants():
    s = pastrami.parse_name("clab_tb1_raw_50_k6.8_intel_bare-metal_as-is_4th_exec_after-reboot.txt")
    assert s["trial_duration_s"] == 10 and s["nic_ring"] == "default" and s["pinning"] == "unpinned"
    assert s["execution"] == 4 and s["after_reboot"]
    s = pastrami.parse_name("mazinga_raw_50_exp_t_10_k6.8_intel_ns_nic_buf_4096_irq_vf0-33_vf1-33.txt")
    assert s["location"] == "mazinga" and s["environment"] == "ns" and s["pinning"] == "1cpu"
    s = pastrami.parse_name("clab_tb1_class_ebpf_raw_30_exp_t_10_k6.5_intel_bare-metal_as-is.txt")
    assert s["experiment_class"] == "ebpf" and s["runs_planned"] == 30
    assert s["environment"] == "bare-metal"
    assert pastrami.parse_name("clab_tb2_raw_50_k6.8_intel_vm_nic_buf_4096.txt")["environment"] == "vm"


def test_read_raw_three_and_five_field_runs(tmp_path):
    f = write_raw(tmp_path / "clab_tb1_raw_30_k6.8_intel_vm_as-is.txt", [
        "[[10000, 0], [100001, 100002, 0], [100001, 99000, 5]]",
        "[[20000, 5], [200000, 190000, 12.5, 42.0, 1.5], [200000, 200000, 100.0, 40.0, 1.0]]",
    ])
    t = pastrami.read_raw(f)
    assert len(t) == 4 and t.line.tolist() == [1, 1, 2, 2]
    assert t.trial.tolist() == [0, 1, 0, 1]
    assert t.cpu_load.iloc[2] == pytest.approx(0.42) and pd.isna(t.cpu_load.iloc[0])
    assert (t.environment == "vm").all() and t.kernel.iloc[0] == "6.8"
    assert stats.trial_loss(t.tx, t.rx)[0] < 0  # rx > tx kept


@pytest.mark.parametrize("line, what", [
    ("[[10000, 0], [100, 90, 0", "not a JSON array"),
    ("[[10000, 0], [100, 90]]", "run 1: expected 3 or 5 numbers"),
    ("[[10000, 0], [0, 0, 0]]", "offered packets must be > 0"),
    ("[[-5, 0], [10, 9, 0]]", "offered rate must be a positive number"),
    ('{"rate": 1}', "expected [[rate_pps"),
])
def test_malformed_lines_name_file_and_line(tmp_path, line, what):
    f = write_raw(tmp_path / "x.txt", ["[[10000, 0], [100, 100, 0]]", line])
    with pytest.raises(DataFormatError) as e:
        pastrami.read_raw(f)
    assert e.value.line == 2 and str(f) in str(e.value) and what in str(e.value)


def test_sample_gives_the_expected_verdicts_in_both_modes(pastrami_sample):
    expected = pd.read_csv(pastrami_sample / "verdicts.tsv", sep="\t")
    trials = pastrami.read_dir(pastrami_sample)
    for mode in ("strict", "notebook"):
        got = {a.experiment + ".txt": a.verdict.label for a in stats.assess(trials, mode=mode)}
        want = dict(zip(expected.file, expected[f"{mode}_verdict"]))
        assert got == want, mode
    # the two modes really differ on this sample (4 files)
    assert (expected.strict_verdict != expected.notebook_verdict).sum() >= 1


def test_registry_pins_the_sample_files_by_hash(pastrami_sample):
    reg = pastrami.registry()
    # the loose files and the archive are downloaded; the files only the archive holds are
    # read from it, each under the name a loose file would have
    assert len(reg) == 107 + 1 and reg[pastrami.ARCHIVE].startswith("sha256:")
    inside = pastrami.archived()
    assert len(inside) == 7 and not set(inside) & set(reg)
    assert all(member == "misure/" + path for path, (_, member, _) in inside.items())
    for f in pastrami_sample.rglob("*.txt"):
        rel = str(f.relative_to(pastrami_sample))
        assert reg[rel] == "sha256:" + hashlib.sha256(f.read_bytes()).hexdigest(), rel


def test_locate_uses_env_dir(pastrami_sample, monkeypatch):
    monkeypatch.setenv(pastrami.ENV_DIR, str(pastrami_sample))
    assert pastrami.locate() == pastrami_sample


def test_locate_bad_dir_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setenv(pastrami.ENV_DIR, str(tmp_path / "nope"))
    with pytest.raises(DataUnavailable, match=pastrami.ENV_DIR) as e:
        pastrami.locate()
    assert "\n" not in str(e.value)


def test_offline_download_is_one_line(tmp_path, monkeypatch):
    monkeypatch.delenv(pastrami.ENV_DIR, raising=False)
    # a closed port on loopback: the download fails at once, as offline
    monkeypatch.setattr(pastrami, "PASTRAMI_URL", "http://127.0.0.1:9/")
    monkeypatch.setattr(pastrami, "_cache_dir", lambda: tmp_path / "cache")
    with pytest.raises(DataUnavailable, match="cannot download") as e:
        pastrami.locate()
    assert "\n" not in str(e.value)
    with pytest.raises(DataUnavailable, match="not cached"):
        pastrami.locate(download=False)


def test_verdict_table_has_setup_columns(pastrami_sample):
    trials = pastrami.read_dir(pastrami_sample / "vm")
    table = pastrami.verdict_table(trials, stats.assess(trials))
    assert set(table.environment) == {"vm"} and table.title.str.contains("vm").all()
    assert {"verdict", "pdr_pps", "saturation_pps", "kernel", "pinning", "nic_ring"} <= set(table.columns)


def _read_slowly(path):
    """The trial records of a raw file the plain way, one run at a time: the reference
    that pastrami's vectorised reader must match."""
    import json

    rows = []
    for lineno, line in enumerate(path.read_text().splitlines(), start=1):
        if line.strip():
            rec = json.loads(line)
            rows += pastrami._runs_slowly(path, lineno, rec[0][0], rec[1:])
    return pd.DataFrame(rows, columns=pastrami._RECORD_COLUMNS)


def test_vectorised_reader_equals_the_run_by_run_reading_on_real_files(pastrami_sample):
    files = sorted(pastrami_sample.rglob("*.txt"))
    trials = pastrami.read_dir(pastrami_sample)
    for f in files:
        got = trials[trials.source == str(f)][pastrami._RECORD_COLUMNS].reset_index(drop=True)
        pd.testing.assert_frame_equal(got, _read_slowly(f), check_exact=True, check_dtype=False)
    # one table of many files is the files' tables one after another, column for column
    one_by_one = pd.concat([pastrami.read_raw(f, str(f.relative_to(pastrami_sample).with_suffix("")))
                            for f in files], ignore_index=True)
    pd.testing.assert_frame_equal(trials, one_by_one, check_exact=True)


def test_odd_but_valid_numbers_take_the_careful_path(tmp_path):
    # ragged runs (3 and 5 fields), a float count and a huge integer: numpy cannot take the
    # line as one integer array, and the careful path gives the same rows as before
    f = write_raw(tmp_path / "clab_tb1_raw_30_k6.8_intel_vm_as-is.txt", [
        "[[10000, 0], [100, 99, 0], [100, 98, 0, 40.0, 1.0]]",
        "[[20000, 0], [200.0, 190, 0], [200, 200, 0]]",
        "[[30000, 0], [300, 300, 123456789012345678901234567890]]",
    ])
    t = pastrami.read_raw(f)
    assert t.tx.tolist() == [100, 100, 200, 200, 300] and t.rx.tolist() == [99, 98, 190, 200, 300]
    assert t.line.tolist() == [1, 1, 2, 2, 3] and t.trial.tolist() == [0, 1, 0, 1, 0]
    assert pd.isna(t.cpu_load.iloc[0]) and t.cpu_load.iloc[1] == pytest.approx(0.40)


@pytest.mark.parametrize("line, what", [
    ("[[10000, 0], [100, 90, 0], [100, 90]]", "run 2: expected 3 or 5 numbers"),
    ('[[10000, 0], [100, 90, 0], [100, "90", 0]]', "run 2: expected 3 or 5 numbers"),
    ("[[10000, 0], [100, 90, 0], [100, -1, 0]]", "run 2: received packets must be >= 0"),
    ("[[10000, 0], [100, 90, 0], [100, 90, 0], [0, 0, 0]]", "run 3: offered packets must be > 0"),
])
def test_a_bad_run_among_good_ones_is_named(tmp_path, line, what):
    f = write_raw(tmp_path / "x.txt", [line])
    with pytest.raises(DataFormatError) as e:
        pastrami.read_raw(f)
    assert e.value.line == 1 and what in str(e.value)


def test_read_files_keeps_bad_files_apart(tmp_path, pastrami_sample):
    good = sorted(pastrami_sample.rglob("*.txt"))[:2]
    bad = write_raw(tmp_path / "bad.txt", ["[[10000, 0], [100, 90]]"])
    trials, errors = pastrami.read_files([good[0], bad, good[1], tmp_path / "missing.txt"])
    assert list(errors) == [bad, tmp_path / "missing.txt"]
    assert "run 1: expected 3 or 5 numbers" in str(errors[bad]) and "cannot read" in str(errors[tmp_path / "missing.txt"])
    assert trials.source.unique().tolist() == [str(good[0]), str(good[1])]
    nothing, errors = pastrami.read_files([bad])
    assert nothing is None and list(errors) == [bad]


# The published archive, misure.zip: the files only it holds, read from inside it

#: the authors' notebook verdicts of all 114 files (tests/data/README.md)
AUTHORS_VERDICTS = ROOT / "tests" / "data" / "pastrami-authors-verdicts.tsv"


def _verdict_by_the_rule(text: str, pdr=0.005, eta=0.1, m=3.0, floor=1e-6) -> str:
    """The paper's strict GOOD/BAD, recomputed from a raw file's text in plain Python:
    the mean loss ratio of each load (floored), the first load above ``pdr``, the load after
    it as the candidate, and GOOD iff the TIR there is below eta*m and every later TIR
    below eta."""
    loads = sorted((rec[0][0], [1 - run[1] / run[0] for run in rec[1:]])
                   for rec in map(json.loads, filter(str.strip, text.splitlines())))
    o = [rate for rate, _ in loads]
    plr = [max(sum(x) / len(x), floor) for _, x in loads]
    above = [i for i, p in enumerate(plr) if p > pdr]
    if not above or above[0] + 1 >= len(o):
        return "BAD"
    cand = above[0] + 1
    tir = {i: (o[i] * (1 - plr[i]) - o[i - 1] * (1 - plr[i - 1])) / (o[i] - o[i - 1])
           for i in range(cand, len(o))}
    return "GOOD" if tir[cand] < eta * m and all(tir[i] < eta for i in range(cand + 1, len(o))) else "BAD"


def test_the_files_only_in_the_archive_are_read_from_it_with_the_authors_verdicts(tmp_path, pastrami_archive):
    shutil.copyfile(pastrami_archive, tmp_path / pastrami.ARCHIVE)
    trials = pastrami.read_dir(tmp_path)
    want = pd.read_csv(AUTHORS_VERDICTS, sep="\t")
    want = want[want.file.isin(pastrami.archived())]
    assert len(want) == 7
    assert sorted(trials.experiment.unique()) == sorted(want.file.str.removesuffix(".txt"))
    # named by their path in the set, their set-up read from it (the names say tb1 / tb2)
    assert set(trials.testbed) == {"tb1", "tb2"} and set(trials.kernel) == {"6.5"}
    assert trials.source.str.startswith(f"{tmp_path / pastrami.ARCHIVE}:misure/").all()
    # the authors' notebook printed these verdicts (notebook mode) for them
    got = {a.experiment + ".txt": a.verdict.label for a in stats.assess(trials, mode="notebook")}
    assert got == dict(zip(want.file, want.notebook_verdict))
    # and the paper's strict test, recomputed from the members' text, gives routerlab's
    import zipfile

    with zipfile.ZipFile(pastrami_archive) as z:
        rule = {f + ".txt": _verdict_by_the_rule(z.read(f"misure/{f}.txt").decode())
                for f in trials.experiment.unique()}
    strict = {a.experiment + ".txt": a.verdict.label for a in stats.assess(trials, mode="strict")}
    assert strict == rule


def test_the_rule_recomputed_gives_the_samples_expected_strict_verdicts(pastrami_sample):
    expected = pd.read_csv(pastrami_sample / "verdicts.tsv", sep="\t")
    got = {f: _verdict_by_the_rule((pastrami_sample / f).read_text()) for f in expected.file}
    assert got == dict(zip(expected.file, expected.strict_verdict))


def _damaged(src: Path, dst: Path) -> Path:
    data = bytearray(src.read_bytes())
    data[len(data) // 2] ^= 0xFF
    dst.write_bytes(bytes(data))
    return dst


def test_a_damaged_archive_is_one_line_naming_it_and_the_loose_files_are_still_read(
        tmp_path, pastrami_archive, pastrami_sample):
    loose = sorted((pastrami_sample / "vm").rglob("*.txt"))
    for f in loose:
        shutil.copyfile(f, tmp_path / f.name)
    archive = _damaged(pastrami_archive, tmp_path / pastrami.ARCHIVE)
    trials, errors = pastrami.read_folder(tmp_path)
    assert sorted(trials.experiment.unique()) == sorted(f.stem for f in loose)
    (e,) = errors
    assert isinstance(e, DataFormatError) and e.source == str(archive) and "SHA-256" in str(e)
    assert "\n" not in str(e)
    with pytest.raises(DataFormatError, match=re.escape(str(archive))):
        pastrami.read_dir(tmp_path)


def test_a_malformed_row_inside_the_archive_names_the_member_and_line(tmp_path, pastrami_archive):
    import zipfile

    path, (_, member, _) = next(iter(pastrami.archived().items()))
    with zipfile.ZipFile(pastrami_archive) as z:
        lines = z.read(member).decode().splitlines()
    lines[2] = "[[10000, 0], [100, 90]]"
    text = "\n".join(lines) + "\n"
    with zipfile.ZipFile(tmp_path / pastrami.ARCHIVE, "w") as z:
        z.writestr(member, text)
    bad = pastrami.Member(tmp_path / pastrami.ARCHIVE, member, path, hashlib.sha256(text.encode()).hexdigest())
    trials, errors = pastrami.read_files([bad])
    assert trials is None
    assert str(errors[bad]) == f"{bad.archive}:{member}:3: run 1: expected 3 or 5 numbers, got [100, 90]"


def _registry_of(monkeypatch, loose: list[Path], root: Path):
    """routerlab's registry made small: these loose files (under their paths below
    ``root``), the real archive's pin, and the real pins of the files only it holds."""
    real = pastrami._pins()
    pins = [[str(f.relative_to(root)), "sha256:" + hashlib.sha256(f.read_bytes()).hexdigest()] for f in loose]
    pins += [p for p in real if p[0] == pastrami.ARCHIVE or len(p) == 3]
    monkeypatch.setattr(pastrami, "_pins", lambda: pins)


def _laid_out(files, root: Path, to: Path) -> Path:
    """``files`` (below ``root``) copied to the same places below ``to``."""
    for f in files:
        (to / f.relative_to(root)).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(f, to / f.relative_to(root))
    return to


def test_the_archive_failing_to_download_is_one_line_and_the_loose_files_are_read(
        tmp_path, monkeypatch, caplog, pastrami_sample):
    monkeypatch.delenv(pastrami.ENV_DIR, raising=False)
    loose = sorted((pastrami_sample / "vm").rglob("*.txt"))
    _registry_of(monkeypatch, loose, pastrami_sample)
    cache = _laid_out(loose, pastrami_sample, tmp_path / "cache")
    monkeypatch.setattr(pastrami, "_cache_dir", lambda: cache)
    monkeypatch.setattr(pastrami, "PASTRAMI_URL", "http://127.0.0.1:9/")  # closed: offline
    with caplog.at_level(logging.WARNING, logger="routerlab"):
        assert pastrami.locate() == cache
    (warned,) = [r.getMessage() for r in caplog.records if r.name.startswith("routerlab")]
    assert "cannot download misure.zip" in warned and "\n" not in warned
    trials, errors = pastrami.read_folder(cache)
    assert sorted(trials.experiment.unique()) == sorted(str(f.relative_to(pastrami_sample).with_suffix(""))
                                                        for f in loose)
    # the archive missing is no error: the loose files are read, and it is named in one line
    assert errors == []
    (note,) = pastrami.left_out(cache)
    assert str(cache / pastrami.ARCHIVE) in note and "7 experiments only it holds are left out" in note
    assert "\n" not in note


def test_a_copy_of_the_loose_files_without_the_archive_gives_their_verdicts(tmp_path, monkeypatch, caplog,
                                                                            pastrami_sample):
    """A copy made before routerlab read misure.zip (or offline, or ROUTERLAB_PASTRAMI_DIR
    naming loose files only): every loose file is judged as before, through read_dir and
    `routerlab assess`, and the missing archive is one warning line, not a failure."""
    from click.testing import CliRunner

    from routerlab.cli.app import app

    loose = sorted((pastrami_sample / "vm").rglob("*.txt"))
    _registry_of(monkeypatch, loose, pastrami_sample)  # these files are the whole loose set
    copy = _laid_out(loose, pastrami_sample, tmp_path / "copy")
    missing = f"{copy / pastrami.ARCHIVE} is missing, so the 7 experiments only it holds are left out"
    expected = pd.read_csv(pastrami_sample / "verdicts.tsv", sep="\t").set_index("file")["strict_verdict"]
    want = {str(f.relative_to(pastrami_sample).with_suffix("")): expected[str(f.relative_to(pastrami_sample))]
            for f in loose}
    with caplog.at_level(logging.WARNING, logger="routerlab"):
        trials = pastrami.read_dir(copy)
    assert {a.experiment: a.verdict.label for a in stats.assess(trials)} == want
    (warned,) = [r.getMessage() for r in caplog.records if r.name.startswith("routerlab")]
    assert missing in warned and "\n" not in warned
    r = CliRunner().invoke(app, ["assess", str(copy), "--json"])
    assert r.exit_code == 0, r.output
    got = {json.loads(line)["file"]: json.loads(line)["verdict"] for line in r.stdout.splitlines()}
    assert got == {str(copy / k) + ".txt": v for k, v in want.items()}
    (line,) = r.stderr.strip().splitlines()
    assert missing in line
    # read with a pattern that none of the archive's files match, nothing is left out
    assert pastrami.left_out(copy, "vm/**/*.txt") == []


def test_an_archive_whose_sha256_differs_is_refused_on_download(tmp_path, monkeypatch, pastrami_archive,
                                                                 pastrami_sample, served):
    monkeypatch.delenv(pastrami.ENV_DIR, raising=False)
    loose = sorted((pastrami_sample / "vm").rglob("*.txt"))
    _registry_of(monkeypatch, loose, pastrami_sample)
    root, url = served
    _laid_out(loose, pastrami_sample, root)
    _damaged(pastrami_archive, root / pastrami.ARCHIVE)
    monkeypatch.setattr(pastrami, "PASTRAMI_URL", url)
    with pytest.raises(DataUnavailable, match="misure.zip .* SHA-256 differs") as e:
        pastrami.fetch(cache=tmp_path / "cache")
    assert "\n" not in str(e.value)
    # the loose files came first and are there; the refused archive is not
    assert all((tmp_path / "cache" / f.relative_to(pastrami_sample)).is_file() for f in loose)
    assert not (tmp_path / "cache" / pastrami.ARCHIVE).exists()


def _authors_verdicts(notebook: Path, archive: Path) -> dict[str, str]:
    """What the authors' notebook printed for each file of the archive in its saved output
    ("Experiment: misure/..." and, below it, "GOOD EXPERIMENT" or "BAD EXPERIMENT"), by the
    experiment id routerlab gives that file: the archive names some files otherwise than
    the loose copies (no testbed, a date), so each member is known by its content's pin."""
    import zipfile

    pins = {p[1].removeprefix("sha256:"): p[0].removesuffix(".txt")
            for p in pastrami._pins() if p[0] != pastrami.ARCHIVE}
    with zipfile.ZipFile(archive) as z:
        ids = {i.filename: pins[hashlib.sha256(z.read(i)).hexdigest()] for i in z.infolist() if not i.is_dir()}
    text = notebook.read_text(errors="replace")
    return {ids[member]: verdict
            for member, verdict in re.findall(r'Experiment: (misure/[^\\"]+?\.txt)\\n".*?"(GOOD|BAD) EXPERIMENT', text)}


def test_the_published_set_is_every_file_with_the_authors_notebook_verdicts(pastrami_published):
    files, problems = pastrami.raw_sources(pastrami_published)
    assert not problems and len(files) == 114
    assert sum(isinstance(f, pastrami.Member) for f in files) == 7
    results = stats.assess(pastrami.read_dir(pastrami_published), mode="notebook")
    assert len(results) == 114
    got = {a.experiment: a.verdict.label for a in results}
    want = pd.read_csv(AUTHORS_VERDICTS, sep="\t")
    assert got == dict(zip(want.file.str.removesuffix(".txt"), want.notebook_verdict))
    # and, where the copy holds the authors' notebook, as it printed them
    notebook = pastrami_published / "pastrami-netrace.ipynb"
    if notebook.is_file():
        assert got == _authors_verdicts(notebook, pastrami_published / pastrami.ARCHIVE)
