"""routerlab.analysis.datasets: the tidy format, validation with file and line, resumable writing."""

import pandas as pd
import pytest

from routerlab.analysis import datasets
from routerlab.errors import DataFormatError


def table(n=3):
    return pd.DataFrame({"experiment": "e1", "offered_pps": [1000.0] * n, "trial": range(n),
                         "tx": [1000] * n, "rx": [999, 1000, 1001], "duration_s": 1.0})


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_roundtrip(tmp_path, fmt):
    meta = pd.DataFrame([{"experiment": "e1", "source": "routerlab testbed", "kernel": "6.1"}])
    datasets.write(datasets.Dataset(table(), meta), tmp_path / "ds", fmt=fmt)
    ds = datasets.read(tmp_path / "ds")
    pd.testing.assert_frame_equal(ds.trials[table().columns], table(), check_dtype=False)
    assert ds.joined()["kernel"].eq("6.1").all()


def test_validation_names_the_csv_line(tmp_path):
    t = table()
    t.loc[1, "tx"] = 0
    t.to_csv(tmp_path / "trials.csv", index=False)
    with pytest.raises(DataFormatError) as e:
        datasets.read(tmp_path / "trials.csv")
    assert e.value.line == 3 and "tx" in str(e.value) and "trials.csv" in str(e.value)


def test_missing_column_and_non_numbers(tmp_path):
    table().drop(columns="rx").to_csv(tmp_path / "a.csv", index=False)
    with pytest.raises(DataFormatError, match="missing required column"):
        datasets.read(tmp_path / "a.csv")
    t = table().astype({"offered_pps": object})
    t.loc[2, "offered_pps"] = "fast"
    t.to_csv(tmp_path / "b.csv", index=False)
    with pytest.raises(DataFormatError, match="b.csv:4: offered_pps is not a number"):
        datasets.read(tmp_path / "b.csv")


def test_trial_writer_keeps_rows_and_resumes(tmp_path):
    cols = ["experiment", "offered_pps", "trial", "tx", "rx"]
    with datasets.TrialWriter(tmp_path, cols) as w:
        w.write({"experiment": "e", "offered_pps": 10.0, "trial": 0, "tx": 10, "rx": 10})
    with datasets.TrialWriter(tmp_path, cols) as w:  # a second run appends, no second header
        assert w.done() == {("e", 10.0, 0)}
        w.write({"experiment": "e", "offered_pps": 10.0, "trial": 1, "tx": 10, "rx": 9})
    assert len(datasets.read(tmp_path).trials) == 2
    # a run written by another version is refused, with what differs and what to do
    with pytest.raises(DataFormatError, match=r"trials.csv:1: its columns are not this version's \(it lacks "
                                              r"cpu_load\), so a run cannot be resumed into it: write to another "
                                              r"folder, or move this file away"):
        datasets.TrialWriter(tmp_path, cols + ["cpu_load"])
    with pytest.raises(DataFormatError, match=r"\(it has .* too\)"):
        datasets.TrialWriter(tmp_path, cols[:-1])


def test_load_any_detects_the_format(tmp_path, pastrami_sample):
    datasets.write(datasets.Dataset(table(), pd.DataFrame({"experiment": []})), tmp_path)
    assert len(datasets.load_any(tmp_path)) == 3
    raw = next(pastrami_sample.rglob("*.txt"))
    assert "kernel" in datasets.load_any(raw).columns
    (tmp_path / "junk.txt").write_text("hello\n")
    with pytest.raises(DataFormatError, match="neither"):
        datasets.load_any(tmp_path / "junk.txt")


def test_reference_tables_are_in_the_repo_with_their_sources():
    ref = datasets.datasets_dir() / "reference"
    for name in ("linux-danos-vyos-100ge", "moonroute-comparison", "fastpath-consolidation"):
        assert len(datasets.reference(name)) > 0
    assert "MoonRoute" in (ref / "README.md").read_text()


def test_one_environment_record_written_and_read_by_one_pair(tmp_path):
    """record_environment writes every column, replaces a rerun's row and leaves the other
    rows as they were written; read_experiments reads the file or its folder."""
    first = datasets.record_environment(tmp_path, "a", "routerlab testbed", setting="network namespaces, veth",
                                        engine="linux", generator_ceiling_pps=409359, command="routerlab measure")
    assert list(first) == list(datasets.EXPERIMENT_COLUMNS) and first["pinning"] == ""
    host = datasets.host()
    assert first["where"] == f"{host['node']} (network namespaces, veth; {host['virt']})"
    datasets.record_environment(tmp_path, "b", "routerlab microbenchmark", when="2026-11-22T11:58:21Z",
                                engine="click; fastclick", versions="python: 3.11.7")
    datasets.record_environment(tmp_path, "a", "routerlab testbed", engine="nft")
    text = (tmp_path / "experiments.csv").read_text().splitlines()
    assert text[0] == ",".join(datasets.EXPERIMENT_COLUMNS) and len(text) == 3
    rec = datasets.read_experiments(tmp_path).set_index("experiment")
    assert rec.loc["a", "engine"] == "nft" and rec.loc["b", "when"] == "2026-11-22T11:58:21Z"
    assert rec.loc["b", "where"] == f"{host['node']} ({host['virt']})"
    # every record names the routerlab that made it first, then the other software given
    assert rec.loc["a", "versions"] == f"routerlab: {datasets.code_version()}"
    assert rec.loc["b", "versions"] == f"routerlab: {datasets.code_version()}; python: 3.11.7"
    with pytest.raises(ValueError, match="benchmark"):
        datasets.record_environment(tmp_path, "c", "x", benchmark="forwarding")
    with pytest.raises(DataFormatError, match="no such file"):
        datasets.read_experiments(tmp_path / "absent")


def test_the_code_version_names_the_commit_and_uncommitted_changes(tmp_path):
    import shutil
    import subprocess

    from routerlab import __version__

    assert datasets.code_version(tmp_path) == __version__  # not a checkout: the version alone
    if shutil.which("git") is None:
        pytest.skip("needs git")

    def git(*args):
        return subprocess.run(["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t",
                               "-c", "commit.gpgsign=false", *args],
                              capture_output=True, text=True, check=True).stdout.strip()

    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "m.py").write_text("x = 1\n")
    (tmp_path / "README.md").write_text("a\n")
    git("init", "-q")
    git("add", ".")
    git("commit", "-qm", "one")
    head = git("rev-parse", "--short=7", "HEAD")
    assert datasets.code_version(tmp_path) == f"{__version__} (git {head})"
    (tmp_path / "README.md").write_text("b\n")  # text, not code: still the commit's code
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "trials.csv").write_text("new data\n")
    assert datasets.code_version(tmp_path) == f"{__version__} (git {head})"
    (tmp_path / "routers").mkdir()
    (tmp_path / "routers" / "new.click").write_text("// a router not yet committed\n")
    assert datasets.code_version(tmp_path) == f"{__version__} (git {head} + uncommitted changes)"
    (tmp_path / "routers" / "new.click").unlink()
    (tmp_path / "lib" / "m.py").write_text("x = 2\n")
    assert datasets.code_version(tmp_path) == f"{__version__} (git {head} + uncommitted changes)"
    git("commit", "-qam", "two")
    assert datasets.code_version(tmp_path) == f"{__version__} (git {git('rev-parse', '--short=7', 'HEAD')})"


def test_the_running_code_version_is_read_once(tmp_path, monkeypatch):
    # a record names the code the process imported: a commit made while it runs changes nothing
    from routerlab import version

    first = datasets.code_version()
    monkeypatch.setattr(version, "repo_root", lambda: tmp_path)
    assert datasets.code_version() == first


def test_every_committed_superseded_attempt_reads_and_points_at_its_trial():
    root = datasets.datasets_dir()
    for f in root.glob("*/superseded_search_trials.csv"):
        # probe: the trial's row within its experiment's repeat (files written before searches
        # were repeated hold one repeat, 0)
        sup = datasets.with_repeats(datasets.read_kind(f.parent, f.name))
        probes = datasets.with_repeats(datasets.read_kind(f.parent, "search_trials.csv"))
        for r in sup.itertuples():
            mine = probes[(probes["experiment"] == r.experiment) & (probes["repeat"] == r.repeat)].reset_index(drop=True)
            assert mine.loc[r.probe, "load"] == r.offered_pps and mine.loc[r.probe, "attempt"] > r.attempt, (f, r)
    for f in root.glob("*/superseded_trials.csv"):
        sup = datasets.read_kind(f.parent, f.name)
        kept = datasets.read(f.parent).trials.set_index(["experiment", "offered_pps", "trial"])
        for r in sup.itertuples():
            assert kept.loc[(r.experiment, r.offered_pps, r.trial), "attempt"] > r.attempt, (f, r)


def test_every_committed_dataset_has_the_one_environment_record():
    root = datasets.datasets_dir()
    folders = sorted(p.parent.name for p in root.glob("*/experiments.csv"))
    assert folders == ["click-course", "comparison", "fast-reroute", "microbench", "testbed-bmv2", "testbed-click",
                       "testbed-ovs", "testbed-veth", "testbed-vpp"]
    assert not list(root.glob("*/environment.csv"))
    for name in folders:
        rec = datasets.read_experiments(root / name)
        assert list(rec.columns) == list(datasets.EXPERIMENT_COLUMNS), name
        assert rec["experiment"].is_unique and (rec["where"] != "").all() and (rec["when"] != "").all(), name
    bench = datasets.read_experiments(root / "microbench").set_index("experiment")
    assert sorted(bench.index) == ["batch", "consolidation", "forwarding"]
    assert bench.loc["forwarding", "engine"] == "click; fastclick"  # the versions in the same order
    assert bench.loc["forwarding", "engine_version"].split("; ")[0].startswith("click (Click)")


def test_readme_documents_every_column():
    text = (datasets.datasets_dir() / "README.md").read_text()
    for col in list(datasets.TRIAL_COLUMNS) + list(datasets.EXPERIMENT_COLUMNS):
        assert f"`{col}`" in text, col


def test_invocation_names_the_command_line_or_the_calling_program(monkeypatch):
    import sys

    monkeypatch.setattr(sys, "argv", ["/usr/local/bin/routerlab", "measure", "--engine", "click", "--out", "runs/a b"])
    assert datasets.invocation() == "routerlab measure --engine click --out 'runs/a b'"
    monkeypatch.setattr(sys, "argv", ["/x/ipykernel_launcher.py", "-f", "k.json"])
    assert datasets.invocation() == "ipykernel_launcher.py (through the routerlab library)"
