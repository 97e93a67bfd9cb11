"""The MoonRoute authors' data: tables derived again from their logs, the figure scripts
read, the disagreements found, and every failure ending in one line naming the file."""

import shutil

import numpy as np
import pandas as pd
import pytest

from routerlab.analysis import moonroute
from routerlab.errors import DataFormatError, DataUnavailable
from routerlab.publish import notebooks


def _copy(folder, into):
    """The pinned files of ``folder`` copied into ``into`` (a copy a test may spoil)."""
    for rel in moonroute.registry():
        (into / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(folder / rel, into / rel)
    return into


@pytest.mark.parametrize("table", moonroute.TABLES, ids=lambda t: t.path.split("/", 1)[1])
def test_every_table_is_its_log_derived_again(moonroute_copy, table):
    c = moonroute.check(moonroute_copy, table)
    assert c["log_mean_mbps"].notna().all(), "a table row with no runs in its log"
    assert c["mean_agrees"].all(), c.loc[~c["mean_agrees"], ["x", "mean_mbps", "log_mean_mbps"]]
    assert c["sd_agrees"].all(), c.loc[~c["sd_agrees"], ["x", "sd_mbps", "log_sd_mbps"]]
    assert (c["runs"] >= 2).all()


def test_derive_sums_ports_drops_idle_counters_and_uses_the_scripts_ddof():
    log = pd.DataFrame({"cfg": [1.0] * 6, "run": [1, 1, 2, 2, 3, 3], "port": ["a", "b"] * 3,
                        "wire_mbps": [100.0, 50.0, 110.0, 0.5, 90.0, 60.0]})
    per_run = np.array([150.0, 110.0, 150.0])  # run 2's second port counted nothing (<= 1 Mbit/s)
    for ddof in (0, 1):
        d = moonroute.derive(log, ("cfg",), ddof).iloc[0]
        assert d["runs"] == 3
        assert d["mean_mbps"] == pytest.approx(per_run.mean())
        assert d["sd_mbps"] == pytest.approx(per_run.std(ddof=ddof))


def test_read_log_parses_moongen_counter_lines(tmp_path):
    f = tmp_path / "run"
    f.write_text("[input_4_output_128_run_2_A0:36:9F:3B:5B:6C] Received 7037258 packets, current rate 2.36 Mpps, "
                 "1210.09 MBit/s, 1588.24 MBit/s wire rate.\n")
    r = moonroute.read_log(f, ("input", "output")).iloc[0]
    assert (r["input"], r["output"], r["run"], r["wire_mbps"]) == (4, 128, 2, 1588.24)


def test_a_malformed_table_row_is_one_line_naming_file_and_line(tmp_path):
    f = tmp_path / "data"
    f.write_text("1 4692.754 8.8\n2 9163.44 53.1\n3 13744.16 lots\n")
    with pytest.raises(DataFormatError, match=rf"^{f}:3: 'lots' is not a number$") as e:
        moonroute.read_table(f)
    assert "\n" not in str(e.value)
    f.write_text("1 4692.754 8.8\n2 9163.44\n")
    with pytest.raises(DataFormatError, match=rf"^{f}:2: "):
        moonroute.read_table(f)


def test_a_log_line_analyze_pl_would_misread_is_named(tmp_path):
    f = tmp_path / "run"
    f.write_text("[cfg_1_run_1_00:25] Received 1 packets, current rate 5.37 Mpps, 2750.84 MBit/s, 3610.47 MBit/s wire rate.\n"
                 "[cfg_1_run_2_00:25] Received 1 packets, cut off\n")
    with pytest.raises(DataFormatError, match=rf"^{f}:2: not a MoonGen counter line"):
        moonroute.read_log(f)


def test_a_file_whose_sha256_differs_is_one_line_naming_it(moonroute_copy, tmp_path):
    spoiled = _copy(moonroute_copy, tmp_path / "copy")
    table = spoiled / "data-used-for-plots/cores/data_2.0GHz"
    table.write_text(table.read_text() + "\n")  # one more line: the same numbers, other bytes
    with pytest.raises(DataUnavailable, match=r"data_2\.0GHz: SHA-256 .* differs from the pinned") as e:
        moonroute.cores(spoiled)
    assert "\n" not in str(e.value)


def test_a_failed_download_is_one_line(tmp_path, monkeypatch):
    monkeypatch.delenv(moonroute.ENV_DIR, raising=False)
    # a closed port on loopback: the download fails at once, as offline
    monkeypatch.setattr(moonroute, "URL", "http://127.0.0.1:9/")
    monkeypatch.setattr(moonroute, "_cache_dir", lambda: tmp_path / "cache")
    with pytest.raises(DataUnavailable, match=rf"cannot download \S+ from {moonroute.REPOSITORY}") as e:
        moonroute.locate()
    assert "\n" not in str(e.value) and moonroute.ENV_DIR in str(e.value)
    with pytest.raises(DataUnavailable, match="not cached"):
        moonroute.locate(download=False)


def test_download_fetches_every_pinned_file_once_and_checks_it(moonroute_copy, served, tmp_path, monkeypatch):
    root, url = served
    _copy(moonroute_copy, root)
    monkeypatch.delenv(moonroute.ENV_DIR, raising=False)
    monkeypatch.setattr(moonroute, "URL", url)
    monkeypatch.setattr(moonroute, "_cache_dir", lambda: tmp_path / "cache")
    folder = moonroute.locate()
    assert folder == tmp_path / "cache"
    assert moonroute.cores(folder).equals(moonroute.cores(moonroute_copy))
    shutil.rmtree(root)  # fetched once: the cache answers now
    assert moonroute.locate(download=False) == folder


def test_a_downloaded_file_whose_sha256_differs_is_one_line(moonroute_copy, served, tmp_path, monkeypatch):
    root, url = served
    _copy(moonroute_copy, root)
    (root / "data-used-for-plots/batch/data").write_text("1 2 3\n")
    monkeypatch.setattr(moonroute, "URL", url)
    with pytest.raises(DataUnavailable, match=r"data-used-for-plots/batch/data from .*SHA-256 differs") as e:
        moonroute.fetch(tmp_path / "cache")
    assert "\n" not in str(e.value)


def test_an_archive_of_the_repository_is_a_copy_too(moonroute_copy, tmp_path, monkeypatch):
    import tarfile

    archive = tmp_path / f"MoonRoute-data-{moonroute.COMMIT}.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(moonroute_copy / "data-used-for-plots", arcname=f"MoonRoute-data-{moonroute.COMMIT}/data-used-for-plots")
        tar.add(moonroute_copy / "benchmark-scripts", arcname=f"MoonRoute-data-{moonroute.COMMIT}/benchmark-scripts")
    monkeypatch.setattr(moonroute, "_cache_dir", lambda: tmp_path / "cache")
    monkeypatch.setenv(moonroute.ENV_DIR, str(archive))
    assert moonroute.freq(moonroute.locate()).equals(moonroute.freq(moonroute_copy))
    # a folder holding the archive under GitHub's name for it (as ../shared/external does)
    monkeypatch.setenv(moonroute.ENV_DIR, str(tmp_path))
    assert moonroute.locate() == tmp_path / "cache-archive"
    (tmp_path / "empty").mkdir()
    monkeypatch.setenv(moonroute.ENV_DIR, str(tmp_path / "empty"))
    with pytest.raises(DataUnavailable, match=r"holds neither data-used-for-plots/") as e:
        moonroute.locate()
    assert "\n" not in str(e.value)


def test_batch_series_are_the_gnuplot_scripts_columns_as_the_log_lays_them_out(moonroute_copy):
    gseries, _ = moonroute.gnuplot_series(moonroute_copy, "data-used-for-plots/batch/plot")
    ours = [s for s in gseries if s.table == "data"]  # the other is Click's, from another paper
    assert [s.label for s in ours] == ["TxB 2", "TxB 4", "TxB 8", "TxB 128", "TxB 256"]
    # the gnuplot script's labels are what the log says its columns are
    assert moonroute.batch_series(moonroute_copy) == [int(s.label.split()[1]) for s in ours]
    b = moonroute.batch(moonroute_copy)
    assert sorted(b["tx_batch"].unique()) == [2, 4, 8, 16, 32, 64, 128, 256, 512]
    assert (b["runs"] == 2).all()


def test_the_poster_s_mislabelled_batch_columns_are_listed(moonroute_copy):
    notes = moonroute.disagreements(moonroute_copy)
    batch = notes[notes["figure"] == "batch"]
    labels = batch[batch["what"].str.contains("drawn from data columns")]
    assert set(labels["written"]) == {"TxB 128", "TxB 256"}
    assert labels["found"].str.contains("TxB 16").any() and labels["found"].str.contains("TxB 32").any()
    assert (labels["where"].str.startswith("data-used-for-plots/batch/batch.tex:")).all()
    # the deviations analyze.pl glued to the next field are found, and drawn from the log
    assert batch["what"].str.contains("end with the row's x").any()


def test_every_disagreement_points_at_a_pinned_file_and_line(moonroute_copy):
    notes = moonroute.disagreements(moonroute_copy)
    assert len(notes) and notes.notna().all().all()
    pinned = moonroute.registry()
    for where in notes["where"]:
        rel, _, line = where.rpartition(":")
        assert rel in pinned and int(line) >= 1
        assert int(line) <= len((moonroute_copy / rel).read_text().splitlines())


def test_typed_lines_are_checked_against_the_fits(moonroute_copy):
    notes = moonroute.disagreements(moonroute_copy)
    checks = moonroute.checks(moonroute_copy).set_index("figure")
    # the core-scaling figure's four typed lines are its gnuplot fits, to the digits typed
    assert checks.loc["cores", "typed_lines"] == 4 and checks.loc["cores", "disagreements"] == 0
    # the frequency figure's are not
    assert notes[(notes["figure"] == "freq") & notes["what"].str.startswith("typed line")].shape[0] == 2
    assert checks["disagreements"].sum() == len(notes)


def test_a_changed_typed_line_is_found(moonroute_copy, tmp_path, monkeypatch):
    spoiled = _copy(moonroute_copy, tmp_path / "copy")
    tex = spoiled / "data-used-for-plots/cores/cores.tex"
    tex.write_text(tex.read_text().replace("6872.65*x", "6872.75*x"))
    real = moonroute.registry()
    import hashlib

    digest = "sha256:" + hashlib.sha256(tex.read_bytes()).hexdigest()
    monkeypatch.setattr(moonroute, "registry", lambda: {**real, "data-used-for-plots/cores/cores.tex": digest})
    notes = moonroute.disagreements(spoiled)
    row = notes[notes["figure"] == "cores"]
    assert len(row) == 1 and row.iloc[0]["written"].startswith("6872.75*x")


def test_line_rate_is_the_published_10gbe_rate():
    assert moonroute.line_rate_mpps(1) == pytest.approx(14.88, abs=0.005)


def test_figures_data_are_in_mpps(moonroute_copy):
    c = moonroute.cores(moonroute_copy)
    assert c["mpps"].max() <= moonroute.line_rate_mpps(moonroute.PORTS["cores"]) * 1.001
    assert set(c["series"]) == {"2.0 GHz single", "2.0 GHz random", "1.2 GHz single", "1.2 GHz random"}
    f = moonroute.freq(moonroute_copy)
    assert f["ghz"].between(1, 4).all() and f["mpps"].max() <= moonroute.line_rate_mpps(1)


def test_the_notebook_without_its_data_is_skipped_in_one_line(tmp_path):
    book = notebooks.notebooks_dir() / "moonroute-authors.ipynb"
    r = notebooks.run(book, tmp_path, {"data_dir": str(tmp_path / "absent")})
    assert r.status == "skipped" and "MoonRoute data" in r.message and "\n" not in r.message


def test_the_other_figure_sets_draw_when_moonroute_s_data_is_missing(tmp_path, monkeypatch):
    monkeypatch.setenv(moonroute.ENV_DIR, str(tmp_path / "absent"))
    results = notebooks.run_all(tmp_path, only=["moonroute-authors", "pastrami-methodology"], jobs=2)
    assert [(r.name, r.status) for r in results] == [("moonroute-authors", "skipped"), ("pastrami-methodology", "ok")]
