"""bench idle: the same sweep with idle CPUs polling and in the kernel's idle states.

The trial tables here are hand-made (not measurements), with the expected summary worked
out by hand. The testbed's own hold of the CPU latency request is tested for real in
test_testbed.py."""

import inspect

import pandas as pd
import pytest
from click.testing import CliRunner

from routerlab.analysis import datasets
from routerlab.measuring import measurement
from routerlab.testbed import capabilities, namespaces
from routerlab.testbed.settings import Settings
from routerlab.benchmarks import idle
from routerlab.cli import app, bench as cli_benchmarks
from routerlab.errors import DataFormatError, ParameterError


def rows(experiment, load, lost, steal):
    """One trial per entry of ``lost`` (packets of 1000) and ``steal`` (ratios)."""
    return [{"experiment": experiment, "engine": "linux", "scenario": "single-flow", "offered_pps": load, "trial": k,
             "tx": 1000, "rx": 1000 - n, "lost": n, "steal": s, "steal_flagged": s > 0.02, "disturbed": s > 0.02}
            for k, (n, s) in enumerate(zip(lost, steal))]


HALTPOLL = "cpuidle driver haltpoll"


def worked_example(tmp_path):
    """Three rounds of each mode at loads 100 and 200 pps (and 300 in os only), three trials each.

    os, rounds 1-2: steal 10% in 9 of the 12 trials at 100 and 200, 1% in 3; loses 10
        packets in every trial at 200 (mean loss 1%) and in one trial at 100 (10/3000).
    poll, rounds 1-2: steal 1% in every trial but one (4%, flagged); loses 5 packets in one
        trial at 200.
    os round 3 polled (another process held the request at 0 µs) and poll round 3 could
    not hold it: both are left out, though poll-3 lost half its packets.
    """
    t = pd.DataFrame(
        rows("linux-single-flow-os-1", 100, [10, 0, 0], [0.1, 0.1, 0.01])
        + rows("linux-single-flow-os-1", 200, [10, 10, 10], [0.1, 0.1, 0.1])
        + rows("linux-single-flow-os-2", 100, [0, 0, 0], [0.1, 0.01, 0.01])
        + rows("linux-single-flow-os-2", 200, [10, 10, 10], [0.1, 0.1, 0.1])
        + rows("linux-single-flow-os-2", 300, [20, 20, 20], [0.1, 0.1, 0.1])
        + rows("linux-single-flow-os-3", 100, [0, 0, 0], [0.0, 0.0, 0.0])
        + rows("linux-single-flow-poll-1", 100, [0, 0, 0], [0.01, 0.01, 0.01])
        + rows("linux-single-flow-poll-1", 200, [5, 0, 0], [0.04, 0.01, 0.01])
        + rows("linux-single-flow-poll-2", 100, [0, 0, 0], [0.01, 0.01, 0.01])
        + rows("linux-single-flow-poll-2", 200, [0, 0, 0], [0.01, 0.01, 0.01])
        + rows("linux-single-flow-poll-3", 100, [500, 500, 500], [0.3, 0.3, 0.3])
        + rows("linux-single-flow-first", 100, [500], [0.5]))  # another benchmark's: not read
    pin = f"generator CPU 0; drops at nft ingress; {namespaces.IDLE_NOTE}"
    held = {"os-1": f"os (the kernel's idle states; {HALTPOLL})", "os-2": f"os (the kernel's idle states; {HALTPOLL})",
            "os-3": "poll (os asked; another process holds /dev/cpu_dma_latency at 0 us)",
            "poll-1": f"poll (/dev/cpu_dma_latency 0 us held while up; {HALTPOLL})",
            "poll-2": f"poll (/dev/cpu_dma_latency 0 us held while up; {HALTPOLL})",
            "poll-3": "os (poll asked; /dev/cpu_dma_latency: Permission denied)"}
    exp = pd.DataFrame({"experiment": [f"linux-single-flow-{k}" for k in held],
                        "pinning": [pin + v for v in held.values()]})
    datasets.write(datasets.Dataset(t, exp), tmp_path)
    return tmp_path


def test_the_summary_of_the_worked_example(tmp_path):
    t = idle.read(worked_example(tmp_path))
    assert len(t) == 33 and set(t["mode"]) == {"os", "poll"}
    assert list(t.drop_duplicates("experiment")["held"]) == ["os", "os", "poll", "poll", "poll", "os"]
    s = idle.summary(t)
    all_os = s[(s["mode"] == "os") & s["offered_pps"].isna()].iloc[0]
    # over 100 and 200 pps only: 300 was measured without polling only
    assert all_os["trials"] == 12 and all_os["steal"] == pytest.approx((9 * 0.1 + 3 * 0.01) / 12)
    assert all_os["flagged"] == pytest.approx(9 / 12) and all_os["lossy"] == 7
    assert all_os["loss"] == pytest.approx(70 / 12000)
    p200 = s[(s["mode"] == "poll") & (s["offered_pps"] == 200)].iloc[0]
    assert (p200["trials"], p200["lossy"]) == (6, 1)
    assert p200["loss"] == pytest.approx(5 / 6000) and p200["flagged"] == pytest.approx(1 / 6)
    p100 = s[(s["mode"] == "poll") & (s["offered_pps"] == 100)].iloc[0]
    assert (p100["trials"], p100["lossy"], p100["loss"]) == (6, 0, 0)  # poll-3's 1,500 lost packets left out


def test_the_report_puts_the_modes_side_by_side_with_their_ratio(tmp_path):
    text = idle.report(idle.read(worked_example(tmp_path)))
    lines = text.splitlines()
    assert lines[:4] == [
        f"os: 15 trials in 2 rounds; idle CPUs: os (the kernel's idle states; {HALTPOLL})",
        "  left out: 3 trials of linux-single-flow-os-3, idle CPUs: poll (os asked; another process holds "
        "/dev/cpu_dma_latency at 0 us)",
        f"poll: 12 trials in 2 rounds; idle CPUs: poll (/dev/cpu_dma_latency 0 us held while up; {HALTPOLL})",
        "  left out: 3 trials of linux-single-flow-poll-3, idle CPUs: os (poll asked; /dev/cpu_dma_latency: "
        "Permission denied)"]
    table = [line.split() for line in lines[4:8]]
    assert [r[0] for r in table[1:]] == ["100", "200", "all"]  # loads ascending, then all of them
    # at 200 pps: steal 10% against 1.5% (0.15x); loss 1% against 0.083% (0.08x)
    assert table[2] == ["200", "6/6", "10.00%", "1.50%", "0.15x", "100%", "17%", "6", "1", "1.000%", "0.083%", "0.08x"]
    # at 100 pps poll lost nothing: a ratio of 0
    assert table[1][-3:] == ["0.167%", "0.000%", "0.00x"]
    assert table[3][:5] == ["all", "12/12", "7.75%", "1.25%", "0.16x"]
    assert lines[8] == "measured in one mode only, not compared (nor in 'all'): 300 pps (os only)"


def test_ratios_say_when_there_is_nothing_to_divide():
    assert idle._ratio(0.0, 0.0) == "-" and idle._ratio(0.01, 0.0) == "inf"
    assert idle._ratio(float("nan"), 0.1) == "-" and idle._ratio(0.05, 0.1) == "0.50x"


def test_a_folder_without_its_sweeps_is_named(tmp_path):
    datasets.write(datasets.Dataset(pd.DataFrame(rows("linux-single-flow-first", 100, [0], [0.0])),
                                    pd.DataFrame({"experiment": []})), tmp_path)
    with pytest.raises(DataFormatError, match=r"trials.csv.*no sweep named <name>-os-N or -poll-N"):
        idle.read(tmp_path)


def test_the_modes_alternate_and_each_trial_is_measured_once(monkeypatch, tmp_path):
    """run() measures round by round, os then poll, each sweep with the testbed's idle mode
    set and no repeats; one ceiling for all, measured once, in the default mode, when
    not given."""
    calls, ceilings = [], []

    def measure(request, **kw):
        calls.append((request.experiment, request.settings.cpu_idle, request.max_repeats, request.ceiling_pps))

    def generator_ceiling(sc, announce, settings):
        ceilings.append(settings.cpu_idle)
        return 1234.0

    monkeypatch.delenv("ROUTERLAB_CPU_IDLE", raising=False)
    monkeypatch.setattr(measurement, "measure", measure)
    monkeypatch.setattr(measurement, "generator_ceiling", generator_ceiling)
    monkeypatch.setattr(idle, "read", lambda out, name: name)
    assert idle.run("linux", out=tmp_path, rounds=2, ceiling_pps=1000.0) == "linux-single-flow"
    assert calls == [("linux-single-flow-os-1", "os", 0, 1000.0), ("linux-single-flow-poll-1", "poll", 0, 1000.0),
                     ("linux-single-flow-os-2", "os", 0, 1000.0), ("linux-single-flow-poll-2", "poll", 0, 1000.0)]
    assert ceilings == []
    calls.clear()
    idle.run("linux", out=tmp_path, rounds=2)
    assert ceilings == ["poll"] and {c[3] for c in calls} == {1234.0} and len(calls) == 4


def test_the_idle_mode_is_checked_and_the_settings_given_win(monkeypatch):
    from dataclasses import replace

    monkeypatch.setenv("ROUTERLAB_CPU_IDLE", "os")
    assert Settings().cpu_idle == "os" and namespaces.NamespaceTestbed().cpu_idle == "os"
    poll = Settings(cpu_idle="poll")
    assert namespaces.make(poll).cpu_idle == "poll"
    assert replace(poll, cpu_idle="os").cpu_idle == "os" and poll.cpu_idle == "poll"
    assert namespaces.make().cpu_idle == "os"
    monkeypatch.setenv("ROUTERLAB_CPU_IDLE", "halt")
    with pytest.raises(ParameterError, match="ROUTERLAB_CPU_IDLE: must be one of poll, os, got 'halt'"):
        namespaces.NamespaceTestbed()
    with pytest.raises(ParameterError, match="cpu_idle"):
        namespaces.NamespaceTestbed(cpu_idle="deep")
    with pytest.raises(ParameterError, match="ROUTERLAB_CPU_IDLE: must be one of poll, os, got 'halt'"):
        Settings()
    with pytest.raises(ParameterError, match="cpu_idle"):
        Settings(cpu_idle="deep")


def test_the_command_line_defaults_are_the_benchmarks():
    cli = {p.name: p.default for p in cli_benchmarks.bench_idle.params}
    lib = inspect.signature(idle.run).parameters
    for name in ("scenario", "out", "loads_frac", "runs", "duration", "rounds"):
        assert cli[name] == lib[name].default, name


def test_the_command_needs_root_and_says_so(monkeypatch, tmp_path):
    monkeypatch.setattr("os.geteuid", lambda: 1000)
    r = CliRunner().invoke(app, ["bench", "idle", "--ceiling", "1000", "--out", str(tmp_path)])
    assert r.exit_code != 0 and "needs root" in r.output


def test_doctor_says_whether_idle_cpus_can_poll(monkeypatch, tmp_path):
    from routerlab.measuring import doctor

    latency, driver = tmp_path / "cpu_dma_latency", tmp_path / "current_driver"
    monkeypatch.setattr(capabilities, "CPU_LATENCY", latency)
    monkeypatch.setattr(capabilities, "CPUIDLE_DRIVER", driver)
    c = doctor._cpu_latency_check()
    assert (c.ok, c.optional) == (False, True)
    assert c.detail == f"{latency}: no such file; idle CPUs halt during measurements (in a VM, more steal)"
    latency.write_bytes(b"\0\0\0\0")
    c = doctor._cpu_latency_check()  # no cpuidle driver: the request is there but does nothing
    assert not c.ok and c.detail.startswith(f"{latency}: no cpuidle driver, so a request changes nothing")
    driver.write_text("haltpoll\n")
    monkeypatch.setattr("os.geteuid", lambda: 0)
    c = doctor._cpu_latency_check()
    assert c.ok and c.detail == f"{latency}: idle CPUs poll while a testbed is up (cpuidle driver: haltpoll)"
    monkeypatch.setattr("os.geteuid", lambda: 1000)
    c = doctor._cpu_latency_check()
    assert c.ok and "root only" in c.detail


def test_report_only_from_the_command_line(tmp_path):
    runner = CliRunner()
    r = runner.invoke(app, ["bench", "idle", "--report-only", str(worked_example(tmp_path))])
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith(f"os: 15 trials in 2 rounds; idle CPUs: os (the kernel's idle states; {HALTPOLL})")
    r = runner.invoke(app, ["bench", "idle", "--report-only", str(tmp_path / "nothing")])
    assert r.exit_code == 1 and "nothing: no such file or folder" in r.output
