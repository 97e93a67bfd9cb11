"""routerlab.analysis.pastrami: the raw format, file names, the published set, and real verdicts."""

import hashlib

import pandas as pd
import pytest

from conftest import write_raw
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
    assert len(reg) == 107
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
