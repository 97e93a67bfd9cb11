"""bench repeat: two sweeps compared load by load, on a worked example.

The trial tables here are hand-made (not measurements): counts chosen so that every rule
of the comparison shows, with the expected interval worked out by hand."""

import inspect
import math

import pandas as pd
import pytest
from click.testing import CliRunner

from routerlab.analysis import datasets
from routerlab.benchmarks import repeat
from routerlab.cli import app, bench as cli_benchmarks
from routerlab.errors import DataFormatError

#: t.ppf(0.975, df=2): the quantile of three trials (scipy.stats.t.ppf(0.975, 2)).
T_975_DF2 = 4.302652729749462


def trial_rows(experiment, load, rx_list, tx=1000, limited=()):
    return [{"experiment": experiment, "engine": "linux", "scenario": "single-flow", "offered_pps": load, "trial": k,
             "tx": tx, "rx": rx, "generator_limited": k in limited} for k, rx in enumerate(rx_list)]


def worked_example():
    """Hand-made: two sweeps of 'linux-single-flow' at six loads (pps), 1000 packets a trial.

    100: both lossless (zero-width interval, equal mean)      -> repeated
    200: first lossless, second loses 1 packet in one trial   -> not repeated (zero width)
    300: first 1%, 2%, 3% (mean 2%, sd 1%), second 4% x 3, and a generator-limited trial
         losing half, left out                                -> repeated (4% <= 4.48%)
    400: first 1%, 2%, 3%, second 5% x 3                      -> not repeated (5% > 4.48%)
    500: one trial in the first sweep                         -> not judged
    600: in the first sweep only                              -> not judged
    """
    f, s = "linux-single-flow-first", "linux-single-flow-second"
    rows = (trial_rows(f, 100, [1000] * 3) + trial_rows(s, 100, [1000] * 3)
            + trial_rows(f, 200, [1000] * 3) + trial_rows(s, 200, [1000, 999, 1000])
            + trial_rows(f, 300, [990, 980, 970]) + trial_rows(s, 300, [960, 960, 960, 500], limited=(3,))
            + trial_rows(f, 400, [990, 980, 970]) + trial_rows(s, 400, [950] * 3)
            + trial_rows(f, 500, [1000]) + trial_rows(s, 500, [1000] * 3)
            + trial_rows(f, 600, [1000] * 3))
    return pd.DataFrame(rows)


def test_the_worked_example_judges_each_load_by_its_rule():
    r = repeat.compare(worked_example(), "linux-single-flow", ceiling_pps=1000)
    t = r.table.set_index("offered_pps")
    assert list(t.index) == [100, 200, 300, 400, 500, 600]
    assert list(t["inside"]) == [True, False, True, False, None, None]
    assert list(t["zero_width"]) == [True, True, False, False, False, True]
    half = T_975_DF2 * 0.01 / math.sqrt(3)  # t * sd / sqrt(K), sd = 1%
    assert t.loc[300, "plr_first"] == pytest.approx(0.02)
    assert (t.loc[300, "lcl95"], t.loc[300, "ucl95"]) == pytest.approx((0.02 - half, 0.02 + half))
    assert t.loc[300, "plr_second"] == pytest.approx(0.04) and t.loc[300, "runs_second"] == 3
    assert t.loc[200, "plr_second"] == pytest.approx(1 / 3000)
    assert t.loc[500, "why"] == "one trial in the first sweep: no interval"
    assert t.loc[600, "why"] == "not in the second sweep"
    assert t.loc[400, "fraction"] == pytest.approx(0.4)
    assert (r.repeated, r.judged, r.share) == (2, 4, 0.5)
    assert r.limited == {"-first": 0, "-second": 1}


def test_the_report_states_the_share_and_each_load():
    r = repeat.compare(worked_example(), "linux-single-flow", ceiling_pps=1000)
    text = repeat.report([r])
    lines = text.splitlines()
    assert lines[0] == ("linux-single-flow: second sweep's mean inside the first's 95% interval at 2 of 4 loads "
                        "(2/4 = 50%); 2 of them judged on a zero-width interval")
    row = next(line.split() for line in lines if line.split()[:2] == ["0.30", "300"])
    assert row == ["0.30", "300", "3", "2%", "[-0.484%,", "4.48%]", "3", "4%", "yes"]
    row = next(line.split() for line in lines if line.split()[:2] == ["0.20", "200"])
    assert row[-1] == "no" and "zero" in row
    assert "generator-limited trials left out: 1 of the second sweep" in text


def test_a_folder_is_read_pair_by_pair(tmp_path):
    other = worked_example().replace({"linux-single-flow-first": "nft-fw-first",
                                      "linux-single-flow-second": "nft-fw-second", "linux": "nft"})
    lone = worked_example().query("experiment == 'linux-single-flow-first'").replace(
        {"linux-single-flow-first": "ebpf-single-flow-first", "linux": "ebpf"})
    trials = pd.concat([worked_example(), other, lone], ignore_index=True)
    exp = pd.DataFrame({"experiment": ["linux-single-flow-first", "linux-single-flow-second"],
                        "generator_ceiling_pps": [1000, 1000], "when": ["2026-01-01T00:00:00Z", "2026-01-01T00:01:00Z"]})
    datasets.write(datasets.Dataset(trials, exp), tmp_path)
    got = repeat.read(tmp_path)
    assert [r.name for r in got] == ["linux-single-flow", "nft-fw"]  # a first without a second is no pair
    assert got[0].when == ("2026-01-01T00:00:00Z", "2026-01-01T00:01:00Z") and got[1].table["fraction"].isna().all()
    assert [r.name for r in repeat.read(tmp_path, engine="nft")] == ["nft-fw"]
    assert "shares: linux-single-flow 2/4 = 50%; nft-fw 2/4 = 50%" in repeat.report(got)
    with pytest.raises(DataFormatError, match="no pair of sweeps NAME-first, NAME-second of ebpf here"):
        repeat.read(tmp_path, engine="ebpf")


def test_report_only_from_the_command_line(tmp_path):
    datasets.write(datasets.Dataset(worked_example(), pd.DataFrame({"experiment": []})), tmp_path)
    runner = CliRunner()
    r = runner.invoke(app, ["bench", "repeat", "--report-only", str(tmp_path)])
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith("linux-single-flow: second sweep's mean inside the first's 95% interval at 2 of 4")
    r = runner.invoke(app, ["bench", "repeat", "--report-only", str(tmp_path), "--engine", "vpp"])
    assert r.exit_code == 1 and "no pair of sweeps" in r.output
    r = runner.invoke(app, ["bench", "repeat"])
    assert r.exit_code == 2 and "--engine" in r.output


def test_the_command_line_defaults_are_the_benchmarks():
    """The "before" measurement was made with these: they must not drift apart."""
    cli = {p.name: p.default for p in cli_benchmarks.bench_repeat.params}
    lib = inspect.signature(repeat.run).parameters
    assert cli["loads_frac"] == lib["loads_frac"].default == "0.04,0.08,0.12,0.16,0.2"
    assert cli["runs"] == lib["runs"].default == 5
    assert cli["duration"] == lib["duration"].default == 1.0


def test_both_sweeps_offer_the_same_loads_when_the_ceiling_is_measured(monkeypatch):
    """The first sweep measures the ceiling and experiments.csv records it in whole pps; the
    second sweep (and a resumed run) reads that record. Measured as 478,605.4 pps and used
    unrounded, 0.1 and 0.5 of it gave 47,861 and 239,303 pps in the first sweep against
    47,860 and 239,302 in the second (bench repeat of 2026-11-25), so those two loads were not compared."""
    from routerlab.measuring import measurement, sweep

    monkeypatch.setattr(measurement, "require_root", lambda settings=None: None)
    monkeypatch.setattr(measurement.ceiling, "measure", lambda spec=None, settings=None: 478605.4)
    measured = measurement.generator_ceiling()
    recorded = float(round(measured))  # as sweep.py writes generator_ceiling_pps
    frac = repeat.LOADS_FRAC
    assert sweep.parse_loads(None, frac, measured) == sweep.parse_loads(None, frac, recorded)
    assert measured == 478605
