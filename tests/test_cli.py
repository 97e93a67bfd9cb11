"""The routerlab command line: output, JSON lines, and bad input."""

import json

import pandas as pd
from click.testing import CliRunner

from conftest import write_raw
from routerlab.cli import app

runner = CliRunner()


def test_assess_sample_folder_one_line_per_file(pastrami_sample):
    r = runner.invoke(app, ["assess", str(pastrami_sample / "vm")])
    assert r.exit_code == 0, r.output
    lines = r.stdout.strip().splitlines()
    # one verdict line per file, its reason on indented lines below it
    heads = [line for line in lines if not line.startswith(" ")]
    assert heads[0].startswith("verdict") and len(heads) == 3
    assert all(line.split()[0] in ("GOOD", "BAD") for line in heads[1:])
    assert sum(line.strip().startswith("why: ") for line in lines) == 2
    assert lines[1].split()[0] in ("GOOD", "BAD") and lines[2].startswith("         why: ")


def test_a_verdict_says_why_and_what_to_do_when_saturation_is_not_reached(tmp_path):
    # the student's case: no load loses anything, so the sweep is BAD for want of saturation
    rows = [{"experiment": "x", "offered_pps": o, "trial": k, "tx": 1000, "rx": 1000}
            for o in (20_000, 60_000, 100_000) for k in range(3)]
    pd.DataFrame(rows).to_csv(tmp_path / "trials.csv", index=False)
    r = runner.invoke(app, ["assess", str(tmp_path), "--format", "routerlab"])
    assert r.exit_code == 0, r.output
    head, *below = r.stdout.strip().splitlines()[1:]
    assert head.split()[0] == "BAD"
    text = " ".join(line.strip() for line in below)
    assert all(line.startswith("         ") for line in below) and all(len(line) <= 100 for line in below)
    assert "why: no load has mean PLR above 0.50%: saturation not reached in the tested range (highest load 100000 pps)" in text
    assert "to do: saturation was not reached: offer loads up to the generator's ceiling" in text
    assert "--search pdr" in text
    rec = json.loads(runner.invoke(app, ["assess", str(tmp_path), "--format", "routerlab", "--json"]).stdout)
    assert "saturation not reached" in rec["reason"] and "--search pdr" in rec["advice"]


def test_a_load_with_one_trial_is_named_under_its_verdict(tmp_path):
    rows = [{"experiment": "x", "offered_pps": o, "trial": k, "tx": 1000, "rx": 1000}
            for o, n in ((100, 3), (200, 1)) for k in range(n)]
    pd.DataFrame(rows).to_csv(tmp_path / "trials.csv", index=False)
    r = runner.invoke(app, ["assess", str(tmp_path), "--format", "routerlab"])
    assert r.exit_code == 0, r.output
    assert "         note: one trial only at 200 pps: no confidence interval there" in r.stdout.splitlines()


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


def test_assess_on_the_published_set_judges_every_file_and_those_only_in_the_archive(pastrami_published):
    from routerlab.analysis import pastrami

    r = runner.invoke(app, ["assess", str(pastrami_published), "--json"])
    assert r.exit_code == 0, r.output
    files = [json.loads(x)["file"] for x in r.stdout.splitlines()]
    assert len(files) == 114 == len(set(files))
    inside = [f for f in files if f.startswith(f"{pastrami_published / pastrami.ARCHIVE}:")]
    assert sorted(f.split(":", 1)[1] for f in inside) == sorted(m for _, m, _ in pastrami.archived().values())


def test_a_damaged_archive_is_one_error_line_and_the_other_files_are_assessed(tmp_path, pastrami_archive,
                                                                            pastrami_sample):
    good = sorted((pastrami_sample / "vm").rglob("*.txt"))
    for f in good:
        (tmp_path / f.name).write_bytes(f.read_bytes())
    data = bytearray(pastrami_archive.read_bytes())
    data[-100] ^= 0xFF
    (tmp_path / "misure.zip").write_bytes(bytes(data))
    r = runner.invoke(app, ["assess", str(tmp_path), "--json"])
    assert r.exit_code == 1
    (line,) = r.stderr.strip().splitlines()
    assert f"{tmp_path / 'misure.zip'}: SHA-256" in line
    assert sorted(json.loads(x)["file"] for x in r.stdout.splitlines()) == sorted(str(tmp_path / f.name) for f in good)


def test_batched_assess_prints_what_each_file_alone_gives(pastrami_sample):
    # `assess` reads and judges every raw file in one batch; each line must be what the
    # file gives on its own, in both modes, in the order of the files
    from routerlab.analysis import pastrami, stats

    files = sorted(pastrami_sample.rglob("*.txt"))
    for mode in ("strict", "notebook"):
        r = runner.invoke(app, ["assess", str(pastrami_sample), "--json", "--mode", mode])
        assert r.exit_code == 0, r.output
        got = [json.loads(x) for x in r.stdout.splitlines()]
        alone = [{"file": str(f), **a.record()} for f in files
                 for a in stats.assess(pastrami.read_raw(f), mode=mode)]
        assert got == alone, mode


def test_files_of_one_name_in_two_folders_stay_apart(tmp_path, pastrami_sample):
    a = next(pastrami_sample.glob("vm/*.txt"))
    b = next(pastrami_sample.rglob("*class_ebpf*.txt"))  # 16 loads, against 9
    for folder, src in (("one", a), ("two", b)):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "same.txt").write_bytes(src.read_bytes())
    r = runner.invoke(app, ["assess", str(tmp_path), "--json"])
    assert r.exit_code == 0, r.output
    got = [json.loads(x) for x in r.stdout.splitlines()]
    assert [g["file"] for g in got] == [str(tmp_path / "one/same.txt"), str(tmp_path / "two/same.txt")]
    assert all(g["experiment"] == "same" for g in got)
    alone = [json.loads(runner.invoke(app, ["assess", str(tmp_path / d / "same.txt"), "--json"]).stdout)
             for d in ("one", "two")]
    assert got == alone and got[0]["loads"] != got[1]["loads"]


def test_a_file_named_twice_is_assessed_twice_not_pooled(tmp_path, pastrami_sample):
    f = next(pastrami_sample.glob("vm/*.txt"))
    odd = tmp_path / "copy.dat"
    odd.write_bytes(f.read_bytes())
    r = runner.invoke(app, ["assess", str(f), str(f), str(odd), "--json", "--format", "pastrami"])
    assert r.exit_code == 0, r.output
    got = [json.loads(x) for x in r.stdout.splitlines()]
    assert [g["file"] for g in got] == [str(f), str(f), str(odd)]  # a raw file is named by its path alone
    assert got[0]["runs_max"] == got[1]["runs_max"] == got[2]["runs_max"] == 50
    assert got[0]["pdr_pps"] == got[2]["pdr_pps"]


def test_a_binary_file_is_named_not_a_traceback(tmp_path):
    junk = tmp_path / "junk.txt"
    junk.write_bytes(b"[[1000, 0], [10, 10, 0]]\n\xff\xfe\x00")
    r = runner.invoke(app, ["assess", str(tmp_path)])
    assert r.exit_code == 1 and f"{junk}: not a text file" in r.stderr and "Traceback" not in r.output


def test_help_shows_arguments_defaults_and_commands_in_their_order():
    r = runner.invoke(app, ["assess", "--help"])
    assert r.exit_code == 0
    assert "Arguments:\n  PATHS...  PASTRAMI raw files or folders" in r.stdout  # an argument's help is kept
    words = " ".join(r.stdout.split())  # as wrapped to any terminal's width
    assert "[default: strict]" in words and "folder). [required]" in words
    assert "[default: 5; x>=1]" in " ".join(runner.invoke(app, ["bench", "assess", "--help"]).stdout.split())
    top = runner.invoke(app, ["--help"]).stdout
    names = [line.split()[0] for line in top.split("Commands:\n")[1].splitlines()]
    # the commands as they are written, then the groups; not alphabetical
    assert names[:3] == ["assess", "fetch-pastrami", "figures"]
    assert names[-6:] == ["bench", "p4", "click", "course", "notebooks", "engines"]
    r = runner.invoke(app, ["bench"])  # a group without a command: its help, as a usage error
    assert r.exit_code == 2 and r.stdout == "" and "Commands:" in r.stderr


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
        (["--engine", "danos"], "unknown engine 'danos'"),
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


def _book(folder, name, code):
    """A minimal notebook of the project's shape (a parameters cell, then ``code``)."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell('mode: str = "replay"  # replay or measure\nout_dir: str = ""  # figures')
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params, nbformat.v4.new_code_cell(code)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = folder / f"{name}.ipynb"
    nbformat.write(nb, path)
    return path


def test_figures_carries_on_past_a_failing_notebook(tmp_path, monkeypatch):
    from routerlab.publish import notebooks

    broken = _book(tmp_path, "a_broken", "raise ValueError('boom')")
    good = _book(tmp_path, "b_good", "from pathlib import Path\nPath(out_dir).mkdir(parents=True)\n(Path(out_dir) / 'ok').write_text('1')")
    monkeypatch.setattr(notebooks, "list_notebooks", lambda folder=None: [broken, good])
    r = runner.invoke(app, ["figures", "--out", str(tmp_path / "out")])
    assert r.exit_code == 1
    assert "FAILED a_broken" in r.stderr and "ValueError: boom" in r.stderr and "ok b_good" in r.stderr
    assert (tmp_path / "out" / "b_good" / "ok").is_file()  # the next notebook still ran
    assert "s wall for 2 notebooks, " in r.stderr and "at a time; the longest" in r.stderr


def _rendezvous(me, other, folder):
    # each waits for the other's flag: both finish only if they run at the same time
    return (f"import time\nfrom pathlib import Path\nPath({str(folder)!r}, {me!r}).touch()\n"
            f"for _ in range(600):\n    if Path({str(folder)!r}, {other!r}).exists(): break\n    time.sleep(0.1)\n"
            f"else:\n    raise TimeoutError('ran alone')")


def test_figures_runs_notebooks_at_the_same_time_and_reports_in_order(tmp_path, monkeypatch):
    from routerlab.publish import notebooks

    books = [_book(tmp_path, "a", _rendezvous("a", "b", tmp_path)), _book(tmp_path, "b", _rendezvous("b", "a", tmp_path))]
    monkeypatch.setattr(notebooks, "list_notebooks", lambda folder=None: books)
    results = notebooks.run_all(tmp_path / "out", jobs=2)
    assert [(r.name, r.status) for r in results] == [("a", "ok"), ("b", "ok")], [r.message for r in results]
    # the next run starts the slowest first, from papermill's record of this one
    assert notebooks.last_seconds(tmp_path / "out", "a") > 0
    assert notebooks.last_seconds(tmp_path / "out", "absent") == 0


def test_figures_starts_the_slowest_first(tmp_path, monkeypatch):
    import nbformat

    from routerlab.publish import notebooks

    books = [_book(tmp_path, name, "pass") for name in ("a_quick", "b_slow", "c_unknown")]
    nb = nbformat.read(books[1], as_version=4)
    nb.metadata["routerlab"] = {"replay_seconds": 60}
    nbformat.write(nb, books[1])
    monkeypatch.setattr(notebooks, "list_notebooks", lambda folder=None: books)
    started = []
    monkeypatch.setattr(notebooks, "run", lambda b, *a, **k: started.append(b.stem) or
                        notebooks.RunResult(b.stem, "ok", "", 0.0, b))
    assert [r.name for r in notebooks.run_all(tmp_path / "out", jobs=1)] == ["a_quick", "b_slow", "c_unknown"]
    assert started == ["b_slow", "a_quick", "c_unknown"]


def test_figures_interrupted_leaves_no_kernel(tmp_path, monkeypatch):
    import psutil

    from routerlab.publish import notebooks

    # without the kill, the slow kernel would run on for ten minutes and leave its mark
    mark = tmp_path / "slow-finished"
    books = [_book(tmp_path, "quick", "pass"),
             _book(tmp_path, "slow", f"import time\nfrom pathlib import Path\ntime.sleep(600)\nPath({str(mark)!r}).touch()")]
    monkeypatch.setattr(notebooks, "list_notebooks", lambda folder=None: books)

    def ctrl_c(result):
        raise KeyboardInterrupt

    import pytest

    with pytest.raises(KeyboardInterrupt):
        notebooks.run_all(tmp_path / "out", jobs=2, on_result=ctrl_c)
    assert not [p for p in psutil.Process().children(recursive=True) if p.is_running()
                and p.status() != psutil.STATUS_ZOMBIE]
    assert not mark.exists()


def test_measure_loads_frac_passes_the_checks_before_root(monkeypatch):
    import os

    monkeypatch.setattr(os, "geteuid", lambda: 1000)  # stop at the root check: the checks before it passed
    r = runner.invoke(app, ["measure", "--engine", "linux", "--loads-frac", "0.02,0.05", "--out", "/tmp/unused"])
    assert r.exit_code == 2 and "needs root" in r.stderr, r.stderr


def test_bench_startup_times_the_commands_next_to_their_floors(pastrami_sample):
    # a benchmark prints figures; what is checked here is that it measures what it says
    r = runner.invoke(app, ["bench", "startup", "--data", str(pastrami_sample), "--repeat", "1"])
    assert r.exit_code == 0, r.output
    out = r.stdout
    n = len(list(pastrami_sample.rglob("*.txt")))
    assert f"{n} files in {pastrami_sample}" in out
    for what in ("routerlab --help", "routerlab assess", 'python -c "import numpy"', "parse, plain numpy"):
        assert what in out, what
    assert "target <= 0.3 s" in out and "target <= 1.5 s" in out


def test_bench_startup_reports_a_failing_command_and_missing_data(monkeypatch, tmp_path, pastrami_sample):
    from routerlab.benchmarks import startup

    monkeypatch.setattr(startup, "command", lambda: ["false"])
    r = runner.invoke(app, ["bench", "startup", "--data", str(pastrami_sample), "--repeat", "1"])
    assert r.exit_code == 1 and "false --help ... exited 1" in r.stderr  # not a time
    r = runner.invoke(app, ["bench", "startup", "--data", str(tmp_path), "--repeat", "1"])
    assert r.exit_code == 1 and "PASTRAMI data" in r.stderr and "Traceback" not in r.output


def test_the_console_entry_flushes_and_keeps_exit_codes(tmp_path, pastrami_sample):
    # `routerlab` leaves without the interpreter's teardown (start-up time, #14): its
    # output must still all arrive, and its exit codes stay those of the commands
    import subprocess
    import sys

    def routerlab(*args):
        return subprocess.run([sys.executable, "-c", "from routerlab.cli import main; main()", *args],
                              capture_output=True, text=True)

    r = routerlab("assess", str(pastrami_sample), "--json")
    assert r.returncode == 0 and len(r.stdout.splitlines()) == len(list(pastrami_sample.rglob("*.txt")))
    r = routerlab("assess", str(tmp_path / "missing.txt"))
    assert r.returncode == 1 and "no such file" in r.stderr
    r = routerlab("assess", "--pdr", "2", "x")
    assert r.returncode == 2 and "pdr" in r.stderr
    r = routerlab("--help")
    assert r.returncode == 0 and r.stdout.startswith("Usage: ") and "engines" in r.stdout


def test_python_dash_m_routerlab_is_the_command():
    """``python -m routerlab`` runs the command line as ``routerlab`` does: its help lists
    every command, a command runs and its exit code comes back."""
    import subprocess
    import sys

    def run(*args):
        return subprocess.run([sys.executable, "-m", "routerlab", *args], capture_output=True, text=True)

    r = run("--help")
    assert r.returncode == 0 and r.stdout.startswith("Usage: ")
    listed = r.stdout.split("Commands:", 1)[1]
    assert all(name in listed for name in ("measure", "report", "engines", "bench", "campaign", "course"))
    r = run("--version")
    assert r.returncode == 0 and r.stdout.startswith("routerlab ")
    r = run("assess", "--pdr", "2", "x")
    assert r.returncode == 2 and "pdr" in r.stderr


def test_version_names_the_release_and_from_a_clone_its_commit():
    import re
    import shutil
    import subprocess
    import sys

    from routerlab import version

    r = runner.invoke(app, ["--version"])
    assert r.exit_code == 0 and r.stdout == f"routerlab {version.code_version()}\n"
    root = version.repo_root()
    clone = root is not None and (root / ".git").exists() and shutil.which("git") is not None

    def head():
        return subprocess.run(["git", "-C", str(root), "rev-parse", "--short=7", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()

    before = head() if clone else None
    p = subprocess.run([sys.executable, "-c", "from routerlab.cli import main; main()", "--version"],
                       capture_output=True, text=True)
    assert p.returncode == 0 and p.stderr == ""
    # the version code_version names (which release tag, or none, it is: tests/test_version.py,
    # in clones of its own with tags it makes); here, that a new process prints it
    release = version.code_version().split(" (", 1)[0]
    form = rf"routerlab {re.escape(release)}(?: \(git ([0-9a-f]{{7}})(?: \+ uncommitted changes)?\))?\n"
    printed = re.fullmatch(form, p.stdout)
    assert printed, p.stdout
    if clone:  # the clone's commit (read around the run: someone may commit meanwhile)
        assert printed[1] in {before, head()}
    else:
        assert printed[1] is None


def test_a_sweep_that_reached_the_generators_ceiling_is_not_told_to_go_there():
    """Worked example: loss never passes 0.5% up to the highest load. Told to offer loads up
    to the generator's ceiling, unless the loads already reached it: then the advice says
    what that means."""
    from routerlab.analysis import stats
    from routerlab.cli.common import verdict_lines

    v = stats.saturation_verdict([1e5, 2e5, 3e5], [0.0, 0.001, 0.002])
    plain = "\n".join(verdict_lines(v))
    assert "offer loads up to the generator's ceiling" in plain
    reached = " ".join(" ".join(verdict_lines(v, reached_ceiling=3e5)).split())
    assert "already reach the generator's ceiling (300,000 pps)" in reached
    assert "its PDR is at least the highest load" in reached and "offer loads up to" not in reached


def test_an_unknown_generator_is_refused_naming_the_ones_there_are():
    for cmd in (["measure", "--engine", "linux", "--out", "x"], ["bench", "engines"], ["bench", "chain"]):
        r = runner.invoke(app, [*cmd, "--generator", "pktgen"])
        assert r.exit_code == 2 and "'pktgen' is not one of 'xdp', 'rlgen'" in r.output


def test_assess_takes_another_tools_smallest_trials_file(tmp_path):
    """offered_pps, tx, rx and run, one experiment per file (named after it): at 200 kpps
    the three runs lost 0.05%, 0.06% and 0.04%, at 300 kpps 10%, 9.67% and 10.33%, so the
    PDR@0.5% is 200 kpps and the NDR 100 kpps. A bad number names its file and line."""
    rows = [(100_000, 1_000_000, r, 1_000_000) for r in (1, 2, 3)]
    rows += [(200_000, 2_000_000, r, rx) for r, rx in ((1, 1_999_000), (2, 1_998_800), (3, 1_999_200))]
    rows += [(300_000, 3_000_000, r, rx) for r, rx in ((1, 2_700_000), (2, 2_710_000), (3, 2_690_000))]
    f = tmp_path / "trex-run.csv"
    f.write_text("offered_pps,tx,rx,run\n" + "".join(f"{o},{t},{rx},{r}\n" for o, t, r, rx in rows))
    r = CliRunner().invoke(app, ["assess", "--json", str(f)])
    assert r.exit_code == 0, r.output
    got = json.loads(r.stdout.strip().splitlines()[-1])
    assert (got["experiment"], got["pdr_pps"], got["ndr_pps"], got["loads"], got["runs_min"]) == \
        ("trex-run", 200_000, 100_000, 3, 3)
    f.write_text("offered_pps,tx,rx,run\n100000,200000,200000,1\n100000,200000,lots,2\n")
    r = CliRunner().invoke(app, ["assess", str(f)])
    assert r.exit_code == 1 and f"{f}:3: rx is not a number: 'lots'" in r.output
