"""bench idle: the same sweep with idle CPUs polling and in the kernel's idle states.

The trial tables here are hand-made (not measurements), with the expected summary worked
out by hand. The testbed's own hold of the CPU latency request is tested for real in
test_testbed.py."""

import inspect

import pandas as pd
import pytest
from click.testing import CliRunner

from routerlab import datasets, measuring, testbed
from routerlab.benchmarks import idle
from routerlab.cli import app, benchmarks as cli_benchmarks
from routerlab.errors import DataFormatError, ParameterError


def rows(experiment, load, lost, steal):
    """One trial per entry of ``lost`` (packets of 1000) and ``steal`` (ratios)."""
    return [{"experiment": experiment, "engine": "linux", "scenario": "single-flow", "offered_pps": load, "trial": k,
             "tx": 1000, "rx": 1000 - n, "lost": n, "steal": s, "steal_flagged": s > 0.02, "disturbed": s > 0.02}
            for k, (n, s) in enumerate(zip(lost, steal))]


def worked_example(tmp_path):
    """Two rounds at loads 100 and 200 pps, three trials each.

    os: steal 10% in 9 of its 12 trials, 1% in 3; loses 10 packets in every trial at 200
        (mean loss 1%) and in one trial at 100 (10/3000).
    poll: steal 1% in every trial but one (4%, flagged); loses 5 packets in one trial at 200.
    Round 1 of poll could not hold the request: its record says so.
    """
    t = pd.DataFrame(
        rows("linux-single-flow-os-1", 100, [10, 0, 0], [0.1, 0.1, 0.01])
        + rows("linux-single-flow-os-1", 200, [10, 10, 10], [0.1, 0.1, 0.1])
        + rows("linux-single-flow-os-2", 100, [0, 0, 0], [0.1, 0.01, 0.01])
        + rows("linux-single-flow-os-2", 200, [10, 10, 10], [0.1, 0.1, 0.1])
        + rows("linux-single-flow-poll-1", 100, [0, 0, 0], [0.01, 0.01, 0.01])
        + rows("linux-single-flow-poll-1", 200, [5, 0, 0], [0.04, 0.01, 0.01])
        + rows("linux-single-flow-poll-2", 100, [0, 0, 0], [0.01, 0.01, 0.01])
        + rows("linux-single-flow-poll-2", 200, [0, 0, 0], [0.01, 0.01, 0.01])
        + rows("linux-single-flow-first", 100, [500], [0.5]))  # another benchmark's: not read
    pin = "generator CPU 0; drops at nft ingress; idle CPUs: "
    exp = pd.DataFrame({"experiment": ["linux-single-flow-os-1", "linux-single-flow-os-2", "linux-single-flow-poll-1",
                                       "linux-single-flow-poll-2"],
                        "pinning": [pin + "os (the kernel's idle states)"] * 2
                        + [pin + "os (poll asked; /dev/cpu_dma_latency: Permission denied)",
                           pin + "poll (/dev/cpu_dma_latency 0 us held while up)"]})
    datasets.write(datasets.Dataset(t, exp), tmp_path)
    return tmp_path


def test_the_summary_of_the_worked_example(tmp_path):
    t = idle.read(worked_example(tmp_path))
    assert len(t) == 24 and set(t["mode"]) == {"os", "poll"}
    s = idle.summary(t)
    all_os = s[(s["mode"] == "os") & s["offered_pps"].isna()].iloc[0]
    assert all_os["trials"] == 12 and all_os["steal"] == pytest.approx((9 * 0.1 + 3 * 0.01) / 12)
    assert all_os["flagged"] == pytest.approx(9 / 12) and all_os["lossy"] == 7
    assert all_os["loss"] == pytest.approx(70 / 12000)
    p200 = s[(s["mode"] == "poll") & (s["offered_pps"] == 200)].iloc[0]
    assert (p200["trials"], p200["lossy"]) == (6, 1)
    assert p200["loss"] == pytest.approx(5 / 6000) and p200["flagged"] == pytest.approx(1 / 6)


def test_the_report_puts_the_modes_side_by_side_with_their_ratio(tmp_path):
    text = idle.report(idle.read(worked_example(tmp_path)))
    lines = text.splitlines()
    assert lines[0] == "os: 12 trials in 2 rounds; idle CPUs: os (the kernel's idle states)"
    # a poll that could not be held is not hidden among the ones that were
    assert lines[1] == ("poll: 12 trials in 2 rounds; idle CPUs: os (poll asked; /dev/cpu_dma_latency: "
                        "Permission denied); poll (/dev/cpu_dma_latency 0 us held while up)")
    table = [line.split() for line in lines[2:6]]
    assert [r[0] for r in table[1:]] == ["100", "200", "all"]  # loads ascending, then all of them
    # at 200 pps: steal 10% against 1.5% (0.15x); loss 1% against 0.083% (0.08x)
    assert table[2] == ["200", "6/6", "10.00%", "1.50%", "0.15x", "100%", "17%", "6", "1", "1.000%", "0.083%", "0.08x"]
    # at 100 pps poll lost nothing: a ratio of 0
    assert table[1][-3:] == ["0.167%", "0.000%", "0.00x"]


def test_a_folder_without_its_sweeps_is_named(tmp_path):
    datasets.write(datasets.Dataset(pd.DataFrame(rows("linux-single-flow-first", 100, [0], [0.0])),
                                    pd.DataFrame({"experiment": []})), tmp_path)
    with pytest.raises(DataFormatError, match=r"trials.csv.*no sweep named <name>-os-N or -poll-N"):
        idle.read(tmp_path)


def test_the_modes_alternate_and_each_trial_is_measured_once(monkeypatch, tmp_path):
    """run() measures round by round, os then poll, each sweep with the testbed's idle mode
    set and no repeats; one ceiling for all."""
    calls = []

    def measure(engine, sc, out, **kw):
        calls.append((kw["experiment"], testbed.default_cpu_idle(), kw["max_repeats"], kw["ceiling_pps"]))

    monkeypatch.setattr(measuring, "measure", measure)
    monkeypatch.setattr(idle, "read", lambda out, name: name)
    assert idle.run("linux", out=tmp_path, rounds=2, ceiling_pps=1000.0) == "linux-single-flow"
    assert calls == [("linux-single-flow-os-1", "os", 0, 1000.0), ("linux-single-flow-poll-1", "poll", 0, 1000.0),
                     ("linux-single-flow-os-2", "os", 0, 1000.0), ("linux-single-flow-poll-2", "poll", 0, 1000.0)]


def test_the_idle_mode_is_checked_and_blocks_nest(monkeypatch):
    monkeypatch.setenv("ROUTERLAB_CPU_IDLE", "os")
    assert testbed.default_cpu_idle() == "os"
    with testbed.cpu_idle("poll"):
        assert testbed.Testbed().cpu_idle == "poll"
        with testbed.cpu_idle("os"):
            assert testbed.default_cpu_idle() == "os"
        assert testbed.default_cpu_idle() == "poll"
    assert testbed.default_cpu_idle() == "os"
    monkeypatch.setenv("ROUTERLAB_CPU_IDLE", "halt")
    with pytest.raises(ParameterError, match="ROUTERLAB_CPU_IDLE: must be one of poll, os, got 'halt'"):
        testbed.Testbed()
    with pytest.raises(ParameterError, match="cpu_idle"):
        testbed.Testbed(cpu_idle="deep")
    with pytest.raises(ParameterError, match="cpu_idle"):
        with testbed.cpu_idle("deep"):
            pass


def test_the_command_line_defaults_are_the_benchmarks():
    cli = {p.name: p.default for p in cli_benchmarks.bench_idle.params}
    lib = inspect.signature(idle.run).parameters
    for name in ("loads_frac", "runs", "duration", "rounds"):
        assert cli[name] == lib[name].default, name


def test_the_command_needs_root_and_says_so(monkeypatch, tmp_path):
    monkeypatch.setattr("os.geteuid", lambda: 1000)
    r = CliRunner().invoke(app, ["bench", "idle", "--ceiling", "1000", "--out", str(tmp_path)])
    assert r.exit_code != 0 and "needs root" in r.output


def test_doctor_says_whether_idle_cpus_can_poll(monkeypatch, tmp_path):
    from routerlab import doctor

    monkeypatch.setattr(testbed, "CPU_LATENCY", tmp_path / "cpu_dma_latency")
    c = doctor._cpu_latency_check()
    assert (c.ok, c.optional) == (False, True)
    assert c.detail.startswith(f"{tmp_path / 'cpu_dma_latency'}: no such file; idle CPUs halt")
    (tmp_path / "cpu_dma_latency").write_bytes(b"\0\0\0\0")
    c = doctor._cpu_latency_check()
    assert c.ok and "idle CPUs poll while a testbed is up" in c.detail
