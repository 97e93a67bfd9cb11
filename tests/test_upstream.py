"""The engines' own upstream test suites (``routerlab engines test``): how a test's output
is judged, and the suites themselves against routerlab's installs of Click, FastClick, p4c
and bmv2 (p4c's a representative part; ``routerlab engines test p4c`` runs it whole)."""

import os
import subprocess

import pytest
from click.testing import CliRunner
from conftest import engine_absent, engine_marks

from routerlab.cli.app import app
from routerlab.engines import builds, upstream
from routerlab.errors import ParameterError, RouterlabError


def _installed(engine):
    def find():
        if builds.installed(engine) is None:
            raise RouterlabError(f"routerlab's own {engine} is not installed (routerlab engines install {engine})")
    return find


needs_click, _ = engine_marks("click", _installed("click"))
needs_fastclick, _ = engine_marks("fastclick", _installed("fastclick"))


def _p4c_and_bmv2():
    for engine in ("p4c", "bmv2"):
        _installed(engine)()


needs_p4c_bmv2, _ = engine_marks("p4c and bmv2", _p4c_and_bmv2)


def test_a_tests_output_is_judged_by_what_the_harness_said():
    ok = "standard/Bypass-01.clicktest: Running...\nstandard/Bypass-01.clicktest: Success!\nclicktest: 1 success"
    assert upstream.judge("click", "standard/Bypass-01.clicktest", ok).outcome == "passed"
    req = "linuxmodule/clickfs-01.clicktest:5: requirement failure at 'click-buildtool provides linuxmodule'"
    assert upstream.judge("click", "linuxmodule/clickfs-01.clicktest", req).why == \
        "requires click-buildtool provides linuxmodule"
    kernel = ("./handlers/KernelHandlerProxy-01.clicktest:9: error 127 at 'click-install KERNELCONFIG'\n"
              "./handlers/KernelHandlerProxy-01.clicktest:9:   ./%script: 12: click-install: not found")
    r = upstream.judge("click", "handlers/KernelHandlerProxy-01.clicktest", kernel)
    assert (r.outcome, r.why) == ("expected", upstream.EXPECTED[0][1])
    swap = "userlevel/uhotswap-01.clicktest:19: file CSOUT has unexpected value starting at line 1"
    assert upstream.judge("fastclick", "userlevel/uhotswap-01.clicktest", swap).outcome == "expected"
    # the same failure in Click, which passes it, is a failure
    r = upstream.judge("click", "userlevel/uhotswap-01.clicktest", swap)
    assert r.outcome == "failed" and r.lines == ["19: file CSOUT has unexpected value starting at line 1"]
    assert upstream.judge("click", "x.clicktest", "").lines == ["(no output)"]


def test_an_engine_without_a_suite_is_refused_naming_the_suites():
    r = CliRunner().invoke(app, ["engines", "test", "bmv2"])  # bmv2's is run through p4c's
    assert r.exit_code == 2
    assert "no upstream suite here for bmv2; suites: click, fastclick, p4c, vpp" in r.output


def test_the_report_counts_and_names_each_outcome():
    run = upstream.SuiteRun("fastclick", "test/clicktest", [
        upstream.TestResult("a.clicktest", "passed"),
        upstream.TestResult("b.clicktest", "skipped", "requires false"),
        upstream.TestResult("c.clicktest", "expected", "upstream limitation"),
        upstream.TestResult("d.clicktest", "failed", "", ["3: standard output has unexpected value"]),
    ], 12.3)
    assert not run.ok
    assert upstream.report([run]).splitlines() == [
        "fastclick test/clicktest: 4 run, 1 passed, 1 skipped by their own requirements, 1 failed as expected, "
        "1 failed (12 s)",
        "  expected  c.clicktest: upstream limitation",
        "  FAILED    d.clicktest",
        "            3: standard output has unexpected value"]


@needs_click
def test_clicks_own_suite_passes_on_routerlabs_click():
    """Click's test/clicktest, every test: none fails but those that need its Linux kernel
    module (click-install), which routerlab does not build."""
    r = CliRunner().invoke(app, ["engines", "test", "click"])
    assert r.exit_code == 0, r.output
    head = next(ln for ln in r.output.splitlines() if ln.startswith("click test/clicktest: "))
    assert head.split(", ")[-1].startswith("0 failed")


@needs_fastclick
def test_fastclicks_own_suite_leaves_no_failure_unexplained():
    r = CliRunner().invoke(app, ["engines", "test", "fastclick"])
    assert r.exit_code == 0, r.output
    # a test that requires `not click-buildtool provides dpdk-packet` is skipped only when
    # the build provides it (the harness runs `not` as a command, which upstream lacks)
    provides = subprocess.run([str(builds.installed_binary("fastclick", "click-buildtool")), "provides",
                               "dpdk-packet"], capture_output=True).returncode == 0
    run = upstream.clicktest("fastclick", ["userlevel/Script-signal-01.clicktest"])
    assert [t.outcome for t in run.results] == ["skipped" if provides else "passed"]


@needs_fastclick
def test_fastclick_measures_latency_without_a_dpdk_device():
    """RecordTimestamp -> TimestampDiff in a FastClick built with DPDK and run without a
    DPDK device: the install's patch (data/patches/) measures the TSC where upstream divides
    by zero (SIGFPE)."""
    click = builds.installed_binary("fastclick", "click")
    config = """InfiniteSource(LENGTH 64, LIMIT 1000, STOP true) -> MarkMACHeader -> NumberPacket
        -> record :: RecordTimestamp() -> CheckNumberPacket(OFFSET 40, COUNT 1000)
        -> diff :: TimestampDiff(RECORDER record) -> Discard;
        DriverManager(wait, read diff.average, read diff.perc100)"""
    p = subprocess.run([str(click), "-e", config], capture_output=True, text=True, timeout=60,
                       env={**os.environ, "CLICKPATH": f"{builds.installed('fastclick')}/share/click:"})
    assert p.returncode == 0, p.stderr
    lines = p.stderr.split()
    assert lines[0] == "diff.average:" and float(lines[1]) >= 0 and lines[2] == "diff.perc100:"


def test_a_harness_that_does_not_end_fails_its_test_and_leaves_nothing_running(monkeypatch, tmp_path):
    monkeypatch.setattr(upstream, "HARNESS_TIMEOUT_S", 0.5)
    r = upstream._run_one("click", "x.clicktest", ["sh", "-c", "sleep 60 & sleep 60"], tmp_path, dict(os.environ))
    assert (r.outcome, r.lines) == ("failed", ["the harness did not end within 0.5 s"])
    left = subprocess.run(["pgrep", "-f", "^sleep 60$"], capture_output=True, text=True).stdout.split()
    assert not left, left


# -- p4c's bmv2 suite ------------------------------------------------------------------------

def _p4c_source():
    try:
        return upstream.source_tree("p4c")
    except RouterlabError as e:
        engine_absent(f"p4c's pinned source tree: {e}")


def test_p4cs_suite_and_its_expected_failures_are_read_from_its_cmake_file():
    src = _p4c_source()
    tests = upstream.p4c_tests(src)
    xfail = upstream.p4c_xfail(src)
    assert "p4_16_samples/arith-bmv2.p4" in tests and "p4_16_bmv_errors/loop-bmv2.p4" in tests
    assert "p4_14_samples/issue60.p4" in tests and not any(t.startswith("p4_16_samples/psa-") for t in tests)
    # each upstream reason belongs to the programs below it
    assert xfail["p4_16_samples/issue1882-1-bmv2.p4"] == "upstream's XFAIL_TESTS: Next three use unknown externs"
    assert xfail["p4_16_samples/issue2664-bmv2.p4"] == xfail["p4_16_samples/issue1882-bmv2.p4"]
    assert xfail["p4_16_samples/issue1193-bmv2.p4"] == "upstream's XFAIL_TESTS: This test uses an undefined extern"


@needs_p4c_bmv2
def test_a_representative_part_of_p4cs_suite_passes_on_routerlabs_p4c_and_bmv2():
    """Every 40th program of p4c's bmv2 suite (p4_14 and p4_16 samples, an error program
    expected not to compile), two upstream expects to fail, and the one with an extern
    module: compiled by routerlab's p4c-bm2-ss, their STF tests run on routerlab's
    simple_switch."""
    src = _p4c_source()
    chosen = upstream.p4c_tests(src)[::40] + ["p4_16_bmv_errors/loop-bmv2.p4", "p4_16_samples/issue907-bmv2.p4",
                                              "p4_14_samples/issue60.p4", upstream.P4C_EXTERNS[0]]
    run = upstream.p4c_bmv2(chosen)
    assert run.ok, upstream.report([run])
    outcome = {t.name: t.outcome for t in run.results}
    assert outcome["p4_16_samples/issue907-bmv2.p4"] == outcome["p4_14_samples/issue60.p4"] == "expected"
    assert outcome["p4_16_bmv_errors/loop-bmv2.p4"] == "passed"  # the harness expects its compile to fail
    assert outcome[upstream.P4C_EXTERNS[0]] == "passed"  # with its extern module, as upstream runs it
    assert len(outcome) >= 15


# -- VPP's test/run_tests.py -------------------------------------------------------------------

needs_vpp, needs_vpp_root = engine_marks("vpp", _installed("vpp"))


def _record(kind, name, text=""):
    import json

    return json.dumps({"kind": kind, "id": name, "text": text})


def test_vpps_outcomes_are_read_from_the_drivers_records():
    cli = ('Traceback (most recent call last):\n  File "/src/test/vpp_pg_interface.py", line 400, in link_down\n'
           "vpp_papi_exceptions.CliFailedCommandError: test: unknown input `interface link-state pg1 down'\n")
    lines = [_record("selected", n) for n in ("a.A.test_ok", "a.A.test_cpu", "a.B.test_1", "a.B.test_2",
                                                "a.C.test_bad", "a.C.test_cli", "vm.D.test_x", "a.E.test_lost")]
    lines += [_record("selected", "a.A.test_ok"), _record("fixme-debian12", "vm.D.test_x"),
              _record("passed", "a.A.test_ok"), _record("skipped", "a.A.test_cpu", "not enough CPUs: needs 3"),
              _record("error", "setUpClass (a.B)", 'Traceback:\n  File "x.py", line 1, in f\nVppDiedError: died\n'),
              _record("failure", "a.C.test_bad", 'Traceback:\n  File "t.py", line 9, in t\n    assert x\n'
                                                 "AssertionError: 1 != 2\n"),
              _record("error", "a.C.test_cli", cli), _record("failure", "vm.D.test_x", "AssertionError: no iperf")]
    got = {r.name: r for r in upstream.vpp_results("\n".join(lines) + "\n")}
    assert list(got) == ["a.A.test_ok", "a.A.test_cpu", "a.B.test_1", "a.B.test_2", "a.C.test_bad", "a.C.test_cli",
                         "vm.D.test_x", "a.E.test_lost"]
    assert got["a.A.test_ok"].outcome == "passed"
    assert (got["a.A.test_cpu"].outcome, got["a.A.test_cpu"].why) == ("skipped", "not enough CPUs: needs 3")
    # a class whose setUpClass failed fails each of its tests with that error
    assert got["a.B.test_2"].outcome == "failed" and got["a.B.test_2"].lines == ['File "x.py", line 1, in f',
                                                                                  "VppDiedError: died"]
    assert got["a.C.test_bad"].lines == ['File "t.py", line 9, in t', "AssertionError: 1 != 2"]
    assert (got["a.C.test_cli"].outcome, got["a.C.test_cli"].why) == ("expected", upstream.VPP_EXPECTED[0][1])
    assert (got["vm.D.test_x"].outcome, got["vm.D.test_x"].why) == ("expected", upstream.VPP_DEBIAN12)
    assert got["a.E.test_lost"].outcome == "failed"


def test_the_vpp_report_names_each_skipped_test_with_why():
    run = upstream.SuiteRun("vpp", "test/run_tests.py", [upstream.TestResult("t.A.test_1", "passed"),
                                                         upstream.TestResult("t.A.test_2", "skipped", "part of extended tests")],
                            3.0, list_skipped=True)
    assert upstream.report([run]).splitlines()[1:] == ["  skipped   t.A.test_2: part of extended tests"]


def test_a_vpp_test_file_that_is_not_there_is_refused(tmp_path):
    (tmp_path / "test").mkdir()
    (tmp_path / "test" / "test_ip4.py").write_text("")
    assert upstream.vpp_filters(tmp_path, ["test_ip4.TestIPv4", "test_ip4.py"]) == ["test_ip4.TestIPv4", "test_ip4"]
    with pytest.raises(ParameterError, match="no such test file in vpp's test/: test_nat44"):
        upstream.vpp_filters(tmp_path, ["test_nat44"])


@needs_vpp_root
def test_part_of_vpps_own_suite_passes_on_routerlabs_vpp():
    """VPP's IPv4 FIB test (packet-generator interfaces), the ACL plug-in's L2/L3 tests
    of IPv4 permit/deny, and one af_xdp routing test between network namespaces with iperf3,
    through VPP's own runner; a test needing the policer plug-in (not built) skips."""
    try:
        upstream.source_tree("vpp")
    except RouterlabError as e:
        engine_absent(f"vpp's pinned source tree: {e}")
    run = upstream.vpp_tests(["test_ip4.TestIPv4", "test_acl_plugin_l2l3.TestACLpluginL2L3.test_0003_ip4_irb_1",
                              "test_acl_plugin.TestACLplugin.test_0001_acl_create",
                              "test_acl_plugin.TestACLplugin.test_0002_acl_permit_apply",
                              "test_ip4.TestIPPunt",
                              "test_vm_af_xdp_l3.TestVPPInterfacesQemuAfXDPL3"
                              ".test_id_29_client_af_xdp_v3_gso_0_gro_0_checksum_0_to_server_af_xdp_v3_gso_0_gro_0"
                              "_checksum_0_mtu_1500_mode_L3_tcp_ipv4"])
    assert run.ok, upstream.report([run])
    outcome = {t.name: t for t in run.results}
    assert outcome["test_ip4.TestIPv4.test_fib"].outcome == "passed"
    assert outcome["test_acl_plugin.TestACLplugin.test_0002_acl_permit_apply"].outcome == "passed"
    punt = [(t.outcome, t.why) for t in run.results if t.name.startswith("test_ip4.TestIPPunt.")]
    assert punt and set(punt) == {("skipped", "Exclude Policer plugin tests")}  # needs a plug-in not built
    assert sum(t.outcome == "passed" for t in run.results) == 5, upstream.report([run])
