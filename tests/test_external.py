"""The exec engine (a router routerlab does not build, started by the user's command) and
engine plug-ins (entry points of other packages).

The testbed tests need root (network namespaces) and skip without it; the Open vSwitch
test needs Debian's openvswitch-switch (scripts/debian-packages.txt installs it) and
fails without it under ROUTERLAB_REQUIRE_ENGINES=1, as a missing engine does."""

import json
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pandas as pd
import pytest
import yaml
from click.testing import CliRunner

from conftest import ROOT, engine_absent
from routerlab.cli import app
from routerlab.engines.external import Commands, note
from routerlab.errors import ParameterError
from routerlab.testbed.interface import STATE_DIR

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root: network namespaces and veth")
OVS = 'sh "$ROUTERS/ovs/ovs-router.sh"'


def run(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def namespaces() -> set[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return {line.split()[0] for line in out.splitlines() if line.strip()}


def alive(pattern: str) -> list[str]:
    return subprocess.run(["pgrep", "-f", pattern], capture_output=True, text=True).stdout.split()


# -- what needs no testbed ------------------------------------------------------------------


def test_commands_are_checked_naming_the_parameter():
    with pytest.raises(ParameterError, match="^start: .*--start COMMAND"):
        Commands(start="  ")
    with pytest.raises(ParameterError, match="^ready_timeout: must be > 0 seconds, got 0"):
        Commands(start="true", ready_timeout=0)
    with pytest.raises(ParameterError, match="^stop: must be a shell command"):
        Commands(start="true", stop="")
    # the kernel forwards before the router's own set-up is there: only its command can tell
    with pytest.raises(ParameterError, match="^ready: a router that makes the kernel forward needs a ready command"):
        Commands(start="true", kernel_forwarding=True)


def test_a_command_in_the_record_is_lossless_and_has_no_separator():
    cmd = 'a=1; echo "$a"; exec sleep 5'
    shown = note(cmd)
    assert ";" not in shown
    assert json.loads(shown) == cmd


def test_measure_refuses_exec_without_a_start_command_and_commands_for_other_engines(tmp_path):
    r = run("measure", "--engine", "exec", "--loads", "1000", "--out", tmp_path / "a")
    assert r.exit_code == 2 and "start: the exec engine needs a start command (--start COMMAND)" in r.output
    r = run("measure", "--engine", "linux", "--start", "sleep 9", "--loads", "1000", "--out", tmp_path / "b")
    assert r.exit_code == 2 and "engine linux is started by routerlab; only --engine exec takes --start" in r.output
    r = run("measure", "--engine", "exec", "--start", "sleep 9", "--scenario", "single-flow-fw50",
            "--loads", "1000", "--out", tmp_path / "c")
    assert r.exit_code == 2 and "engine exec does not support firewall" in r.output


def test_a_campaign_step_measures_an_exec_router_and_writes_its_command_quoted(tmp_path):
    from routerlab.publish import campaign
    from routerlab.measuring import campaignfile

    f = tmp_path / "campaign.yaml"
    f.write_text(yaml.safe_dump({"description": "x", "steps": [
        {"measure": {"engine": "exec", "scenario": "single-flow", "loads": [1000], "runs": 1, "duration": 1,
                     "start": f"{OVS} start", "counters": f"{OVS} counters", "kernel_forwarding": False,
                     "ready_timeout": 5}}]}))
    c = campaignfile.load(f)
    step = c.steps[0]
    assert step.router() == Commands(start=f"{OVS} start", counters=f"{OVS} counters", ready_timeout=5)
    assert f"--start '{OVS} start'" in step.command() and "--no-kernel-forwarding" in step.command()
    campaign.check(c, c.steps)  # the engine and scenario resolve with the commands
    # the command the step stands for is one the command line takes
    import shlex

    args = shlex.split(step.command())[1:]
    assert app.main(args + ["--help"], standalone_mode=False) == 0

    f.write_text(yaml.safe_dump({"description": "x", "steps": [
        {"measure": {"engine": "exec", "scenario": "single-flow", "loads": [1000], "ready": "true"}}]}))
    c = campaignfile.load(f)
    with pytest.raises(Exception, match=r"campaign.yaml: step 1 \(measure\): start: the exec engine needs"):
        campaign.check(c, c.steps)

    f.write_text(yaml.safe_dump({"description": "x", "steps": [
        {"measure": {"engine": "exec", "scenario": "single-flow", "loads": [1000]}}]}))
    c = campaignfile.load(f)
    with pytest.raises(Exception, match=r"campaign.yaml: step 1 \(measure\): start: the exec engine needs"):
        campaign.check(c, c.steps)
    f.write_text(yaml.safe_dump({"description": "x", "steps": [
        {"measure": {"engine": "exec", "scenario": "single-flow", "loads": [1000], "start": "x",
                     "kernel_forwarding": "yes"}}]}))
    with pytest.raises(Exception, match="kernel_forwarding.*true or false"):
        campaignfile.load(f)


# -- plug-ins -------------------------------------------------------------------------------


def _plugin_tree(tmp_path: Path) -> Path:
    """A plug-in package as pip installs one (a module and its dist-info with entry
    points), plus one whose module is missing."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "rlplug.py").write_text(
        "from routerlab.engines.kernel import Linux\n\n"
        "class Plugged(Linux):\n"
        "    name = 'plugged'\n"
        "    where = 'the rlplug package'\n")
    # a module that registers an engine under a name routerlab's own engine has
    (site / "rlsteal.py").write_text(
        "from routerlab.engines.base import register\n"
        "from routerlab.engines.kernel import Linux\n\n"
        "@register\n"
        "class Stolen(Linux):\n"
        "    name = 'linux'\n")
    for dist, eps in (("rlplug", "plugged = rlplug:Plugged"), ("rlbroken", "broken = rlbroken_missing:Engine"),
                      ("rlsteal", "steal = rlsteal")):
        info = site / f"{dist}-0.1.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n")
        (info / "entry_points.txt").write_text(f"[routerlab.engines]\n{eps}\n")
    return site


def test_a_plugin_adds_an_engine_and_a_broken_one_is_named_by_doctor(tmp_path):
    site = _plugin_tree(tmp_path)
    env = {**os.environ, "PYTHONPATH": f"{site}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    code = ("from routerlab import engines\nfrom routerlab.measuring import measurement\n"
            "e, sc = measurement.resolve('plugged', 'single-flow')\n"
            "print(type(e).__name__, e.where, 'plugged' in engines.names(), type(engines.get('linux')).__name__)\n")
    p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "Plugged the rlplug package True Linux"

    p = subprocess.run([sys.executable, "-m", "routerlab.cli", "doctor"], env={**env, "COLUMNS": "250"},
                       capture_output=True, text=True)
    lines = p.stdout.splitlines()
    broken = [ln for ln in lines if "plug-in" in ln]
    assert len(broken) == 2, p.stdout
    assert "broken (rlbroken_missing:Engine, from rlbroken)" in broken[0]
    assert "not loaded: ModuleNotFoundError" in broken[0]
    assert "steal (rlsteal, from rlsteal)" in broken[1]
    assert "not loaded: engine name(s) linux taken; kept routerlab's" in broken[1]
    # the others are unaffected: routerlab's own engines and the working plug-in
    assert any(ln.split()[:3] == ["engine", "plugged", "ok"] for ln in lines), p.stdout
    assert any(ln.split()[:3] == ["engine", "linux", "ok"] for ln in lines), p.stdout
    assert "broken" in p.stderr  # and it counts as missing


def test_without_plugins_an_unknown_engine_is_refused_with_the_known_ones():
    from routerlab import engines

    with pytest.raises(ParameterError, match="unknown engine 'nosuch'; known: linux, nft, ebpf.*exec"):
        engines.get("nosuch")


# -- on the testbed -------------------------------------------------------------------------


@needs_root
def test_a_start_command_that_exits_is_one_line_with_its_status_and_output(tmp_path):
    before = namespaces()
    r = run("measure", "--engine", "exec", "--start", "echo starting; echo no such interface >&2; exit 3",
            "--loads", "1000", "--runs", "1", "--duration", "0.2", "--ceiling", "100000", "--out", tmp_path / "d")
    assert r.exit_code == 2
    assert ("exec: the start command exited with status 3 before the router was ready; "
            "its last output: starting | no such interface") in r.output
    assert namespaces() == before
    assert pd.read_csv(tmp_path / "d" / "trials.csv").empty  # its header only: no trial ran
    assert not list(STATE_DIR.glob("rl*-exec"))  # its RUN_DIR is gone too


@needs_root
def test_a_router_never_ready_times_out_and_nothing_is_left_running(tmp_path):
    marker = f"{uuid.uuid4().int % 10**6 + 10**6}.25"
    before = namespaces()
    r = run("measure", "--engine", "exec", "--start", f"echo up; exec sleep {marker}", "--ready", "false",
            "--ready-timeout", "1", "--loads", "1000", "--ceiling", "100000", "--out", tmp_path / "d")
    assert r.exit_code == 2
    assert ("exec: the router was not ready after 1 s: the ready command (false) never exited 0; "
            "its last output: up") in r.output
    assert alive(f"sleep {marker}") == []
    assert namespaces() == before


@needs_root
def test_a_router_that_forwards_nothing_is_not_ready_by_the_default_probe(tmp_path):
    marker = f"{uuid.uuid4().int % 10**6 + 10**6}.5"
    r = run("measure", "--engine", "exec", "--start", f"exec sleep {marker}", "--ready-timeout", "1",
            "--loads", "1000", "--ceiling", "100000", "--out", tmp_path / "d")
    assert r.exit_code == 2
    assert "not ready after 1 s: no frame sent from the generator reached the sink" in r.output
    assert alive(f"sleep {marker}") == []


@needs_root
def test_the_commands_see_the_testbed_and_a_kernel_router_forwards(tmp_path):
    """A start command that writes its environment and lets the kernel forward: every
    variable is the testbed's, the sweep's packets arrive, the record names the command."""
    env_file, reads = tmp_path / "env.txt", tmp_path / "reads"
    start = f'env > {env_file}; ls -d "$RUN_DIR" >> {env_file}; exec sleep 600'
    # a counter that counts its own readings: one more per reading
    counters = f'n=$(cat {reads} 2>/dev/null || echo 0); echo $((n + 1)) > {reads}; echo readings $((n + 1))'
    r = run("measure", "--engine", "exec", "--kernel-forwarding", "--ready", f"test -s {env_file}",
            "--start", start, "--counters", counters, "--loads", "2000", "--runs", "2", "--duration", "0.3",
            "--ceiling", "100000", "--out", tmp_path / "d", "--experiment", "kernel-by-exec")
    assert r.exit_code == 0, r.output
    env = dict(line.split("=", 1) for line in env_file.read_text().splitlines() if "=" in line)
    assert env["IN_ADDR"] == "10.70.1.1/24" and env["OUT_ADDR"] == "10.70.2.1/24"
    assert env["PREV_ADDR"] == "10.70.1.2" and env["NEXT_ADDR"] == "10.70.2.2"
    assert env["DEST_NET"] == "10.71.0.0/24" and env["CPU"] == "1" and env["MTU"].isdigit()
    assert env["IN_DEV"].endswith("d0") and env["OUT_DEV"].endswith("d1")
    assert all(len(env[k].split(":")) == 6 for k in ("IN_MAC", "OUT_MAC", "PREV_MAC", "NEXT_MAC"))
    assert Path(env["ROUTERS"], "ovs", "ovs-router.sh").is_file()
    assert env_file.read_text().splitlines()[-1] == env["RUN_DIR"]  # it existed while the router ran
    assert not Path(env["RUN_DIR"]).exists()  # and is gone
    t = pd.read_csv(tmp_path / "d" / "trials.csv")
    assert len(t) == 2 and (t["rx"] == t["tx"]).all()
    rec = pd.read_csv(tmp_path / "d" / "experiments.csv").iloc[0]
    assert rec["engine"] == "exec" and "kernel_forwarding=on" in rec["notes"] and "ready=command" in rec["notes"]
    assert f"exec_start={note(start)}" in rec["notes"]
    drops = pd.read_csv(tmp_path / "d" / "drops.csv")
    mine = drops[(drops["source"] == "engine") & (drops["reason"] == "readings")]
    assert len(mine) == 2 and (mine["counted_as"] == "context").all()  # read before and after each trial


@needs_root
def test_a_counters_line_that_is_not_name_count_is_refused_before_any_trial(tmp_path):
    r = run("measure", "--engine", "exec", "--kernel-forwarding", "--ready", "true", "--start", "exec sleep 600",
            "--counters", "echo 'drops: many'", "--loads", "1000", "--ceiling", "100000", "--out", tmp_path / "d")
    assert r.exit_code == 2
    assert "exec: the counters command's line 1 is not 'name count': 'drops: many'" in r.output
    assert pd.read_csv(tmp_path / "d" / "trials.csv").empty
    r = run("measure", "--engine", "exec", "--kernel-forwarding", "--ready", "true", "--start", "exec sleep 600",
            "--counters", "echo af_packet.in 5", "--loads", "1000", "--ceiling", "100000", "--out", tmp_path / "e")
    assert r.exit_code == 2 and "names af_packet.in: names starting af_packet. are routerlab's own" in r.output


@needs_root
def test_a_router_that_dies_during_the_measurement_stops_it(tmp_path):
    """Its trials would measure nothing: the sweep stops with the router's last words, the
    trials before are kept."""
    # it dies once it has forwarded 1,200 packets, in the third trial of 500, however long
    # the set-up took on a busy machine; every first attempt kept (a repeated one would
    # spend packets too)
    dies = ("echo serving; while [ $(cat /sys/class/net/$OUT_DEV/statistics/tx_packets) -lt 1200 ]; do sleep 0.05; "
            "done; echo crashed; exit 7")
    r = run("measure", "--engine", "exec", "--kernel-forwarding", "--ready", "true",
            "--start", dies, "--loads", "1000", "--runs", "20",
            "--duration", "0.5", "--ceiling", "100000", "--max-repeats", "0", "--out", tmp_path / "d")
    assert r.exit_code == 2
    assert ("exec: the start command exited with status 7 during the measurement; its last output: "
            "serving | crashed") in r.output
    assert len(pd.read_csv(tmp_path / "d" / "trials.csv")) == 2, r.output


@needs_root
def test_open_vswitch_measured_through_exec_a_sweep_a_search_and_a_verdict(tmp_path):
    """Open vSwitch's userspace datapath, which routerlab does not build, routing by an
    OpenFlow rule (routers/ovs/ovs-router.sh): a sweep, a PDR search and the verdict."""
    if shutil.which("ovs-vswitchd") is None:
        engine_absent("Open vSwitch not installed: Debian package openvswitch-switch")
    router = ["--engine", "exec", "--start", f"{OVS} start", "--stop", f"{OVS} stop",
              "--counters", f"{OVS} counters", "--version-command", "ovs-vswitchd --version"]
    before = namespaces()
    r = run("measure", *router, "--loads", "2000,4000,2000000", "--runs", "3", "--duration", "0.5",
            "--ceiling", "3000000", "--out", tmp_path / "sweep", "--experiment", "ovs-single-flow")
    assert r.exit_code == 0, r.output
    t = pd.read_csv(tmp_path / "sweep" / "trials.csv")
    assert sorted(t["offered_pps"].unique()) == [2000, 4000, 2000000] and len(t) == 9
    low = t[t["offered_pps"] < 10000]
    assert (low["rx"] > 0.9 * low["tx"]).all()  # it routes: the sink counts only what reached it
    # far above its capacity its input socket overflows: counted, as loss, by routerlab
    drops = pd.read_csv(tmp_path / "sweep" / "drops.csv")
    sock = drops[(drops["offered_pps"] == 2000000) & (drops["reason"] == "af_packet.in")]
    assert len(sock) == 3 and (sock["counted_as"] == "loss").all() and (sock["packets"] > 0).all()
    rec = pd.read_csv(tmp_path / "sweep" / "experiments.csv").iloc[0]
    assert rec["engine_version"].startswith("ovs-vswitchd (Open vSwitch) ")
    assert "kernel_forwarding=off" in rec["notes"]
    assert "verdict" in r.output

    r = run("assess", tmp_path / "sweep")
    assert r.exit_code == 0 and "ovs-single-flow" in r.output
    assert r.output.split("\n")[1].split()[0] in ("GOOD", "BAD"), r.output

    r = run("measure", *router, "--search", "pdr", "--repeats", "1", "--duration", "0.3", "--ceiling", "100000",
            "--out", tmp_path / "search", "--experiment", "ovs-search")
    assert r.exit_code == 0, r.output
    res = pd.read_csv(tmp_path / "search" / "search_results.csv")
    assert len(res) == 1 and res["kind"].iloc[0] == "pdr"
    assert r.output.startswith("routerlab PDR: ")
    assert namespaces() == before and alive("ovs-vswitchd unix:/run/routerlab") == []


def test_the_engines_are_listed_in_one_order_whichever_module_was_imported_first():
    """The registry imports routerlab's own engine modules by name: importing one of them
    first (as the Click course does) changes neither the list nor what an unknown name is
    told."""
    code = ("{first}from routerlab import engines\nprint(engines.names())\n"
            "try:\n    engines.get('nope')\nexcept Exception as e:\n    print(e)\n")
    said = [subprocess.run([sys.executable, "-c", code.format(first=first)], capture_output=True, text=True,
                           check=True).stdout
            for first in ("", "from routerlab.engines import click\n", "from routerlab.engines import external\n")]
    assert said[0] == said[1] == said[2]
    assert said[0].startswith("['linux', 'nft', 'ebpf', 'bmv2', 'click', 'fastclick', 'fastclick-dpdk', 'vpp', 'vpp-af-packet', "
                              "'calibration', "
                              "'exec'")
