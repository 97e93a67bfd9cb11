"""The routerlab command line: output, JSON lines, and bad input."""

import json

import pandas as pd
from typer.testing import CliRunner

from conftest import write_raw
from routerlab.cli import app

runner = CliRunner()


def test_assess_sample_folder_one_line_per_file(pastrami_sample):
    r = runner.invoke(app, ["assess", str(pastrami_sample / "vm")])
    assert r.exit_code == 0, r.output
    lines = r.stdout.strip().splitlines()
    assert lines[0].startswith("verdict") and len(lines) == 3
    assert all(line.split()[0] in ("GOOD", "BAD") for line in lines[1:])


def test_assess_json_and_modes_follow_the_expected_verdicts(pastrami_sample):
    expected = pd.read_csv(pastrami_sample / "verdicts.tsv", sep="\t")
    for mode in ("strict", "notebook"):
        r = runner.invoke(app, ["assess", str(pastrami_sample), "--json", "--mode", mode])
        assert r.exit_code == 0, r.output
        recs = [json.loads(x) for x in r.stdout.splitlines()]
        got = {rec["file"].split("pastrami-sample/")[1]: rec["verdict"] for rec in recs}
        assert got == dict(zip(expected.file, expected[f"{mode}_verdict"]))
        assert {"pdr_pps", "saturation_pps", "loads", "runs_max"} <= set(recs[0])


def test_malformed_file_is_named_and_others_still_assessed(tmp_path, pastrami_sample):
    bad = write_raw(tmp_path / "bad.txt", ["[[1000, 0], [10, 10, 0]]", "[[2000, 0], [10, oops]]"])
    good = next((pastrami_sample / "vm").glob("*.txt"))
    r = runner.invoke(app, ["assess", str(bad), str(good)])
    assert r.exit_code == 1
    assert f"{bad}:2:" in r.stderr
    assert good.name in r.stdout


def test_bad_parameter_is_named():
    r = runner.invoke(app, ["assess", "--pdr", "2", "nothing.txt"])
    assert r.exit_code == 2 and "pdr" in r.stderr


def test_missing_path_is_an_error_not_a_traceback(tmp_path):
    r = runner.invoke(app, ["assess", str(tmp_path / "missing.txt")])
    assert r.exit_code == 1 and "no such file" in r.stderr and "Traceback" not in r.output


def test_assess_routerlab_dataset_with_overrides(tmp_path):
    rows = [{"experiment": "x", "offered_pps": o, "trial": k, "tx": 1000, "rx": int(1000 * (1 - p))}
            for o, p in [(100, 0), (200, 0.01), (300, 0.34)] for k in range(3)]
    pd.DataFrame(rows).to_csv(tmp_path / "trials.csv", index=False)
    r = runner.invoke(app, ["assess", str(tmp_path), "--json", "--eta", "0.2", "--format", "routerlab"])
    assert r.exit_code == 0, r.output
    rec = json.loads(r.stdout)
    assert rec["params"]["eta"] == 0.2 and rec["pdr_pps"] == 100


def test_figures_rejects_unknown_parameter_and_measure_mode():
    r = runner.invoke(app, ["figures", "--out", "/tmp/unused", "-p", "no_such_param=1"])
    assert r.exit_code == 2 and "no_such_param" in r.stderr
    r = runner.invoke(app, ["figures", "--out", "/tmp/unused", "-p", "mode=measure"])
    assert r.exit_code == 2 and "replays" in r.stderr
    r = runner.invoke(app, ["figures", "--out", "/tmp/unused", "-p", "broken"])
    assert r.exit_code == 2 and "name=value" in r.stderr


def test_measure_rejects_bad_parameters_before_needing_root():
    cases = [
        (["--engine", "vpp"], "unknown engine 'vpp'"),
        (["--engine", "linux", "--scenario", "warp"], "unknown scenario"),
        (["--engine", "linux", "--loads", "-5,10"], "loads must be > 0"),
        (["--engine", "linux", "--loads", "10", "--runs", "0"], "runs"),
        (["--engine", "linux", "--loads", "ten"], "not a comma-separated list"),
        (["--engine", "nft", "--scenario", "gre-multiflow-fw50", "--loads", "10"], "does not support gre"),
        (["--engine", "linux", "--loads", "10", "--duration", "0"], "duration"),
    ]
    for args, msg in cases:
        r = runner.invoke(app, ["measure", "--out", "/tmp/unused", *args])
        assert r.exit_code == 2, (args, r.output)
        assert msg in r.stderr, (args, r.stderr)


def test_figures_carries_on_past_a_failing_notebook(tmp_path, monkeypatch):
    import nbformat

    from routerlab import notebooks

    def book(name, code):
        nb = nbformat.v4.new_notebook()
        params = nbformat.v4.new_code_cell('mode: str = "replay"  # replay or measure\nout_dir: str = ""  # figures')
        params.metadata["tags"] = ["parameters"]
        nb.cells = [params, nbformat.v4.new_code_cell(code)]
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
        path = tmp_path / f"{name}.ipynb"
        nbformat.write(nb, path)
        return path

    broken = book("a_broken", "raise ValueError('boom')")
    good = book("b_good", "from pathlib import Path\nPath(out_dir).mkdir(parents=True)\n(Path(out_dir) / 'ok').write_text('1')")
    monkeypatch.setattr(notebooks, "list_notebooks", lambda folder=None: [broken, good])
    r = runner.invoke(app, ["figures", "--out", str(tmp_path / "out")])
    assert r.exit_code == 1
    assert "FAILED a_broken" in r.stderr and "ValueError: boom" in r.stderr and "ok b_good" in r.stderr
    assert (tmp_path / "out" / "b_good" / "ok").is_file()  # the next notebook still ran


def test_measure_loads_frac_passes_the_checks_before_root(monkeypatch):
    import os

    monkeypatch.setattr(os, "geteuid", lambda: 1000)  # stop at the root check: the checks before it passed
    r = runner.invoke(app, ["measure", "--engine", "linux", "--loads-frac", "0.02,0.05", "--out", "/tmp/unused"])
    assert r.exit_code == 2 and "needs root" in r.stderr, r.stderr
