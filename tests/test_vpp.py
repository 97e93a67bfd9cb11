"""FD.io VPP as an engine (vpp on af_xdp, vpp-af-packet): its configuration from a
scenario, its counters read back, and real packets through it on the namespace testbed.
Skipped, with the reason, where VPP is not built (failed under ROUTERLAB_REQUIRE_ENGINES=1)."""

import os
import re
import subprocess
from pathlib import Path

import pytest
from conftest import checked_engine

from routerlab.analysis import scenarios
from routerlab.engines import kernel, vpp
from routerlab.engines.rules import Rule, firewall
from routerlab.errors import EngineNotFound, RouterlabError
from routerlab.testbed import namespaces, traffic
from routerlab.testbed.interface import STATE_DIR

root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root: network namespaces and veth")


@pytest.fixture(params=["vpp", "vpp-af-packet"])
def engine(request):
    return checked_engine(request.param)


def test_a_negated_port_becomes_two_permit_ranges_then_the_policy():
    rules = [Rule("drop", saddr="192.0.2.1/32", proto="udp", dport=(1000, 1000)),
             Rule("accept", daddr="10.71.0.0/24", proto="udp", dport=(9, 9), dport_negate=True)]
    assert vpp.acl_rules(rules, "drop") == [
        "deny src 192.0.2.1/32 dst 0.0.0.0/0 proto 17 dport 1000-1000",
        "permit src 0.0.0.0/0 dst 10.71.0.0/24 proto 17 dport 0-8",
        "permit src 0.0.0.0/0 dst 10.71.0.0/24 proto 17 dport 10-65535",
        "deny src 0.0.0.0/0 dst 0.0.0.0/0"]
    assert vpp.acl_rules([], "accept") == ["permit src 0.0.0.0/0 dst 0.0.0.0/0"]


def test_every_rule_of_the_fw50_scenario_is_in_the_acl():
    rules, policy = firewall(scenarios.load("single-flow-fw50"))
    acl = vpp.acl_rules(rules, policy)
    assert len(acl) == 51 and acl[-1].startswith("permit") and sum(a.startswith("deny") for a in acl) == 50


def test_the_startup_file_names_the_cpu_and_only_the_plugins_used(tmp_path):
    text = vpp.startup_conf(tmp_path, 1, Path("/x/vpp_plugins"), "rl123456")
    assert "main-core 1" in text and "plugin default { disable }" in text and "path /x/vpp_plugins" in text
    assert all(f"plugin {p} {{ enable }}" in text for p in vpp.PLUGINS)
    assert f"cli-listen {tmp_path}/cli.sock" in text and "dpdk" not in text


SHOW_INTERFACE = """\
              Name               Idx    State  MTU (L3/IP4/IP6/MPLS)     Counter          Count
in                                1      up          1500/0/0/0     rx packets                  5000
                                                                    rx bytes                  300000
                                                                    drops                          3
                                                                    ip4                         5000
local0                            0     down          0/0/0/0
out                               2      up          1500/0/0/0     tx packets                  4997
                                                                    tx bytes                  299820
                                                                    tx-error                       2
"""

SHOW_ERRORS = """\
   Count                  Node                              Reason               Severity
         3             ip4-input                     ip4 ttl <= 1                   error
        10        acl-plugin-in-ip4-fa                ACL deny packets              error
         7        acl-plugin-in-ip4-fa                ACL permit packets            info
"""


SHOW_RUNTIME = """\
Time 1.2, 10.000000 sec internal node vector rate 29.24 loops/sec 14939575.75
             Name                 State         Calls          Vectors        Suspends      Packet-Clocks   Vectors/Call
af_xdp-input                     polling          17806300            5000               0          1.40e5            0.00
ip4-lookup                       active                171            5000               0          9.06e1           29.24
ip6-ra-process                 "any wait"                0               0               1          1.24e4            0.00
"""


class _Said:
    """A VppEngine whose CLI answers are given (no VPP runs)."""

    def __init__(self, monkeypatch, answers: dict, veth_drops: int, veth=True):
        self.eng = vpp.VppEngine()
        monkeypatch.setattr(self.eng, "cli", lambda *cmd, timeout=60: answers[" ".join(cmd)])
        monkeypatch.setattr(vpp, "veth_queue_counters", lambda ns, dev: {"drops": veth_drops, "xdp_drops": 0})
        self.eng._veth = veth


def test_only_what_vpp_dropped_counts_as_its_drops(monkeypatch):
    """Error counters that count no dropped packet (af_xdp's wake-ups, af_packet's blocks,
    everything the ACL plug-in counts) are left out; a drop (a TTL, no free transmit slot),
    rx-miss and tx-error and the input veth's refused redirects are in."""
    errors = SHOW_ERRORS + ("       171               out-tx                        syscall required            error\n"
                            "         4               out-tx                        no free tx slots            error\n"
                            "        12          af-packet-input                   timed out block             error\n")
    tb = type("TB", (), {"ns_dut": "rl000000-dut", "dut_in": "rl000000d0"})()
    said = _Said(monkeypatch, {"show errors": errors, "show interface": SHOW_INTERFACE}, veth_drops=9)
    assert said.eng.drop_counters(tb) == {"ip4-input:ip4 ttl <= 1": 3, "out-tx:no free tx slots": 4,
                                         "out:tx-error": 2, "in:redirect refused": 9}
    # af_packet's input is a socket: no redirect to refuse
    said = _Said(monkeypatch, {"show errors": errors, "show interface": SHOW_INTERFACE}, veth_drops=9)
    said.eng.input = "af_packet"
    assert "in:redirect refused" not in said.eng.drop_counters(tb)


def test_counters_and_errors_are_read_from_vpps_own_words():
    assert vpp.parse_runtime(SHOW_RUNTIME) == {"af_xdp-input": (5000, 1.40e5, True), "ip4-lookup": (5000, 90.6, False)}
    assert vpp.parse_frequency("Model name: AMD EPYC\nBase frequency:           2.5955 GHz\n") == 2.5955e9
    ifs = vpp.parse_interfaces(SHOW_INTERFACE)
    assert ifs["in"] == {"rx packets": 5000, "drops": 3, "ip4": 5000}
    assert ifs["out"] == {"tx packets": 4997, "tx-error": 2} and ifs["local0"] == {}
    errs = vpp.parse_errors(SHOW_ERRORS)
    assert errs[("ip4-input", "ip4 ttl <= 1", "error")] == 3
    assert errs[("acl-plugin-in-ip4-fa", "ACL permit packets", "info")] == 7


@root
def test_it_forwards_filters_and_counts_on_the_testbed(engine):
    """Single flow with 1,000 routes, then the drop scenario through the ACL: VPP's own
    count of forwarded packets is the sink's, the kernel forwards nothing, and the firewall
    drops exactly the traffic meant to be dropped."""
    for name, legit_share in (("single-flow", 1.0), ("ddos-drop50-fw5", 0.5)):
        sc = scenarios.load(name, routes=1000)
        with namespaces.NamespaceTestbed() as tb:
            facts = engine.start(tb, sc)
            try:
                assert facts["vpp_input"] == engine.input
                f0 = engine.forwarded(tb)
                engine.costs(tb)
                r = traffic.run_trial(tb, 5_000, 0.5, traffic.TrafficSpec(flows=sc.flows, drop_share=sc.drop_share))
                assert r.tx == pytest.approx(r.kernel_tx * legit_share, rel=0.01)
                assert 0.98 * r.tx <= r.rx <= r.tx
                assert engine.forwarded(tb) - f0 == r.rx
                assert kernel.guard_count(tb) == 0
                assert not {k: v for k, v in engine.drop_counters(tb).items() if v}
                # prefix length, then routes of that length: the fill routes are /32s
                host_routes = re.search(r"^\s*32\s+(\d+)\s*$", engine.cli("show", "ip", "fib", "summary"), re.M)
                assert int(host_routes.group(1)) >= sc.routes - 1
                if sc.rules:
                    assert "ACL deny" in engine.cli("show", "errors")
                costs = engine.costs(tb)
                assert 0 < costs["ip4-lookup"] < costs["graph"] < 100_000  # ns per packet
            finally:
                engine.stop(tb)
        assert not (STATE_DIR / f"{tb.prefix}-{engine.name}").exists()


@root
def test_a_vpp_that_cannot_start_is_named_in_one_line_and_leaves_nothing(tmp_path, monkeypatch):
    eng = checked_engine("vpp")
    bad = vpp.startup_conf

    def wrong_value(folder, cpu, plugin_dir, prefix):
        return bad(folder, cpu, plugin_dir, prefix).replace(f"buffers-per-numa {vpp.BUFFERS}", "buffers-per-numa lots")

    monkeypatch.setattr(vpp, "startup_conf", wrong_value)
    sc = scenarios.load("single-flow")
    with namespaces.NamespaceTestbed() as tb:
        with pytest.raises(RouterlabError) as e:
            eng.start(tb, sc)
        prefix = tb.prefix
    assert not (STATE_DIR / f"{prefix}-vpp").exists()
    assert str(e.value).startswith("vpp: exited (1) while starting: vlib_buffers_configure: parse error")
    assert "buffers-per-numa lots" in str(e.value) and "\n" not in str(e.value)
    assert not subprocess.run(["pgrep", "-f", f"{STATE_DIR}/{prefix}-vpp"], capture_output=True).stdout


@root
def test_a_missing_plugin_and_an_interface_vpp_refuses_are_named(tmp_path, monkeypatch):
    eng = checked_engine("vpp")
    monkeypatch.setattr(vpp, "PLUGINS", vpp.PLUGINS + ("nosuch_plugin.so",))
    with pytest.raises(EngineNotFound, match="nosuch_plugin.so"):
        eng.check()
    monkeypatch.undo()

    real = vpp.setup_commands
    monkeypatch.setattr(vpp, "setup_commands", lambda tb, sc, input: [
        c.replace(f"host-if {tb.dut_in} ", "host-if rlnosuchdev ") for c in real(tb, sc, input)])
    with namespaces.NamespaceTestbed() as tb:
        with pytest.raises(RouterlabError) as e:
            eng.start(tb, scenarios.load("single-flow"))
        prefix = tb.prefix
    assert "`create interface af_xdp host-if rlnosuchdev" in str(e.value) and "\n" not in str(e.value)
    assert "'rlnosuchdev' failed" in str(e.value)  # VPP's own words, naming the device
    # stopped by start itself: no VPP left, no run folder
    assert not (STATE_DIR / f"{prefix}-vpp").exists()
    assert not subprocess.run(["pgrep", "-f", f"{STATE_DIR}/{prefix}-vpp"], capture_output=True).stdout


@root
def test_a_sweep_records_vpps_time_per_packet_and_its_report_shows_it(tmp_path):
    eng = checked_engine("vpp")
    from routerlab.measuring import measurement
    from routerlab.publish import facts, report

    out = tmp_path / "vpp"
    measurement.measure(measurement.Request("vpp", "single-flow", out, loads="5000,20000", runs=2, duration=0.5,
                                            ceiling_pps=1_000_000))
    import pandas as pd

    costs = pd.read_csv(out / "engine_costs.csv")
    trials = pd.read_csv(out / "trials.csv")
    # one set of stages per kept trial, its graph the sum of the forwarding nodes at least
    assert len(costs.groupby(["offered_pps", "trial"])) == len(trials) == 4
    graph = costs[costs["stage"] == "graph"].set_index(["offered_pps", "trial"])["ns_per_packet"]
    lookup = costs[costs["stage"] == "ip4-lookup"].set_index(["offered_pps", "trial"])["ns_per_packet"]
    assert (graph > lookup).all() and (lookup > 0).all()
    rec = pd.read_csv(out / "experiments.csv").iloc[0]
    assert "vpp_rx_mode=polling" in rec["notes"] and rec["engine_version"].startswith("FDio/vpp@")
    f = facts.of(out)
    assert set(f["engine_costs"]["vpp-single-flow"]["stages"]) >= {"graph", "ip4-lookup", "out-tx"}
    assert "## The engine's own time per packet" in report.render(out, f)


RUN_VPP = """
import sys
from routerlab import engines
from routerlab.analysis import scenarios
from routerlab.testbed import namespaces
with namespaces.NamespaceTestbed(prefix=sys.argv[1]) as tb:
    engines.get("vpp").start(tb, scenarios.load("single-flow"))
    print("up", flush=True)
    sys.stdin.read()
"""


@root
def test_a_run_killed_with_vpp_up_is_cleaned_by_routerlab_clean():
    """kill -9 of the measuring process leaves VPP, its run folder and its shared memory;
    ``routerlab clean`` removes all three."""
    eng = checked_engine("vpp")
    import sys

    from routerlab.testbed import cleanup

    prefix = "rl" + os.urandom(3).hex()
    p = subprocess.Popen([sys.executable, "-c", RUN_VPP, prefix], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         text=True)
    try:
        assert p.stdout.readline().strip() == "up"
        assert list(Path("/dev/shm").glob(f"{prefix}-*")) and (STATE_DIR / f"{prefix}-vpp").is_dir()
    finally:
        p.kill()
        p.wait()
        cleanup.clean()
    assert not subprocess.run(["pgrep", "-f", f"{STATE_DIR}/{prefix}-vpp"], capture_output=True).stdout
    assert not (STATE_DIR / f"{prefix}-vpp").exists() and not list(Path("/dev/shm").glob(f"{prefix}-*"))
