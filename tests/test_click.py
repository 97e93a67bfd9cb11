"""The Click engines (click, fastclick, fastclick-dpdk): configurations parse, the router
logic from memory, and real packets on the testbed. Skipped, with the reason, where an
engine is not built."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import engine_absent

from routerlab import engines
from routerlab.engines import kernel
from routerlab.analysis import scenarios
from routerlab.testbed import traffic
from routerlab.testbed import namespaces, shell
from routerlab.engines import click
from routerlab.errors import EngineNotFound

try:
    CLICK = engines.find_binary("click", "click")
    needs_click = pytest.mark.skipif(False, reason="")
except EngineNotFound as e:
    needs_click = pytest.mark.engine_absent(f"Click not built: {e}")
    CLICK = None

root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root: network namespaces and veth")


@pytest.fixture(params=["click", "fastclick", "fastclick-dpdk"])
def engine(request):
    """Each Click flavour that is built (FastClick: ROUTERLAB_FASTCLICK), else a skip."""
    eng = engines.get(request.param)
    try:
        eng.check()
    except EngineNotFound as e:
        engine_absent(str(e))
    return eng


def configs(tmp_path, scenario="single-flow", **over):
    return click.write_configs(tmp_path / "click", scenarios.load(scenario, **over))


def run_nodev(folder, **defines):
    out = subprocess.run([CLICK, str(folder / "iprouter-nodev.click")] + [f"{k}={v}" for k, v in defines.items()],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    fwd, err = (int(x) for x in out.stdout.split())
    return fwd, err


def click_check(folder, conf):
    # click-check's element map may lack IPRewriter (a warning); errors fail
    check = Path(CLICK).with_name("click-check")
    r = subprocess.run([str(check), str(folder / conf)], capture_output=True, text=True, cwd=folder)
    assert r.returncode == 0 and "error" not in r.stderr.lower(), r.stderr


@needs_click
@pytest.mark.parametrize("name", list(scenarios.presets()))
def test_every_configuration_parses(tmp_path, name):
    folder = configs(tmp_path, name, routes=min(scenarios.presets()[name].routes, 2000))
    for conf in ("iprouter.click", "iprouter-nodev.click", "nat.click", "loadbalancer.click"):
        click_check(folder, conf)


@pytest.mark.parametrize("name", list(scenarios.presets()))
def test_every_fastclick_configuration_parses(tmp_path, name):
    eng = engines.get("fastclick")
    try:
        eng.check()
    except EngineNotFound as e:
        engine_absent(str(e))
    folder = eng.write(tmp_path / "fastclick", scenarios.load(name, routes=min(scenarios.presets()[name].routes, 2000)))
    check = Path(eng.binary()).with_name("click-check")
    for conf in ("iprouter.click", "iprouter-dpdk.click"):
        r = subprocess.run([str(check), str(folder / conf)], capture_output=True, text=True, cwd=folder)
        assert r.returncode == 0 and "configuration OK" in r.stderr, r.stderr


def run_expr(folder, expr):
    """Run a Click configuration from memory in ``folder``; the lines it printed (IPPrint)."""
    out = subprocess.run([CLICK, "-e", "require(library services.click);\n" + textwrap.dedent(expr)],
                         capture_output=True, text=True, timeout=60, cwd=folder)
    assert out.returncode == 0, out.stderr
    return [line.strip() for line in out.stderr.splitlines() if line.strip()]


UDP_5000_5001 = r"\<1388 1389 0012 0000 0000 0000 0000 0000 0000>"


@needs_click
def test_gre_tunnel_writes_the_outer_header(tmp_path):
    lines = run_expr(configs(tmp_path), rf"""
        InfiniteSource(DATA {UDP_5000_5001}, LIMIT 1, STOP true)
          -> IPEncap(17, 10.70.1.2, 10.71.0.1) -> GRETunnel(10.70.2.1, 10.70.2.2)
          -> CheckIPHeader -> IPPrint(out, CONTENTS true) -> Discard;""")
    head = " ".join(lines[1:3]).split()
    assert "10.70.2.1 > 10.70.2.2: ip-proto-47" in lines[0]
    assert head[5] == "00000800" and head[6].startswith("45")  # GRE: no flags, IPv4; then the inner header


@needs_click
def test_source_nat_rewrites_and_maps_replies_back(tmp_path):
    lines = run_expr(configs(tmp_path), rf"""
        nat :: SourceNAT(10.70.2.1);
        InfiniteSource(DATA {UDP_5000_5001}, LIMIT 1, STOP false)
          -> IPEncap(17, 10.70.1.2, 10.71.0.1) -> CheckIPHeader -> [0]nat;
        rep :: InfiniteSource(DATA \<1389 0400 0012 0000 0000 0000 0000 0000 0000>, LIMIT 1, ACTIVE false)
          -> IPEncap(17, 10.71.0.1, 10.70.2.1) -> CheckIPHeader -> [1]nat;
        stray :: InfiniteSource(DATA \<1389 0999 0012 0000 0000 0000 0000 0000 0000>, LIMIT 1, ACTIVE false)
          -> IPEncap(17, 10.71.0.1, 10.70.2.1) -> CheckIPHeader -> [1]nat;
        nat[0] -> IPPrint(out) -> Discard;
        nat[1] -> IPPrint(back) -> Discard;
        DriverManager(wait 0.1s, write rep.active true, write stray.active true, wait 0.2s, stop);""")
    assert any(line.startswith("out:") and "10.70.2.1.1024 > 10.71.0.1.5001" in line for line in lines)
    back = [line for line in lines if line.startswith("back:")]
    assert len(back) == 1 and "10.71.0.1.5001 > 10.70.1.2.5000" in back[0]  # the stray one is dropped


@needs_click
def test_load_balancer_keeps_flows_on_one_backend(tmp_path):
    lines = run_expr(configs(tmp_path), """
        FastUDPFlows(RATE 0, LIMIT 64, LENGTH 60, SRCETH 02:00:00:00:00:03, SRCIP 10.70.1.2,
                     DSTETH 02:00:00:00:00:01, DSTIP 10.71.0.1, FLOWS 16, FLOWSIZE 100)
          -> Unqueue -> Strip(14) -> CheckIPHeader
          -> LoadBalancer(10.72.0.1, 10.72.0.2, 10.72.0.3, 10.72.0.4) -> CheckIPHeader -> IPPrint(lb) -> Discard;
        DriverManager(wait 0.3s, stop);""")
    lines = [line for line in lines if line.startswith("lb:")]
    backend = {}
    for line in lines:
        src, dst = line.split()[2], line.split()[4].rstrip(":")  # "lb: TIME: SRC.PORT > DST.PORT: udp N"
        flow = src.rsplit(".", 1)[1] + ">" + dst.rsplit(".", 1)[1]
        backend.setdefault(flow, set()).add(dst.rsplit(".", 1)[0])
    assert len(lines) == 64 and len(backend) >= 12  # 16 flows with random ports: two may coincide
    assert all(len(b) == 1 for b in backend.values())                     # a flow never changes backend
    assert len(set().union(*backend.values())) >= 3                       # and the flows are spread


@needs_click
def test_forwards_from_memory(tmp_path):
    assert run_nodev(configs(tmp_path), COUNT=1000) == (1000, 0)


@needs_click
def test_ttl_expiry_and_no_route_become_icmp_errors(tmp_path):
    folder = configs(tmp_path)
    assert run_nodev(folder, COUNT=10, TTL=1) == (0, 10)
    assert run_nodev(folder, COUNT=10, DST="192.0.2.9") == (0, 10)


@needs_click
def test_firewall_drops_what_its_rules_drop(tmp_path):
    folder = configs(tmp_path, "ddos-drop50-fw5", routes=10)
    assert run_nodev(folder, COUNT=10) == (10, 0)  # to 10.71.0.1, port 5001: allowed
    assert run_nodev(folder, COUNT=10, DST="10.128.0.3") == (0, 0)  # routed, but denied by the policy


def test_generated_tables_say_so():
    text = click.tables_click(scenarios.load("single-flow-fw5", routes=3))
    assert text.startswith("// tables.click -- generated by routerlab")
    assert "10.71.0.0/24 0" in text and "10.128.0.1/32 0" in text and "0.0.0.0/0 1" in text
    assert text.count("deny ") == 5 and "allow all" in text


@root
def test_on_the_testbed_forwarding_counters_and_drop(engine):
    eng = engine
    for name, legit_share in (("single-flow", 1.0), ("ddos-drop50-fw5", 0.5)):
        sc = scenarios.load(name, routes=100)
        with namespaces.NamespaceTestbed() as tb:
            eng.bring_up(tb, sc)
            f0 = eng.forwarded(tb)
            r = traffic.run_trial(tb, 5_000, 0.5, traffic.TrafficSpec(flows=sc.flows, drop_share=sc.drop_share))
            assert r.tx == pytest.approx(r.kernel_tx * legit_share, rel=0.01)
            # the engine's own threads ran, by the scheduler's clock: some time per packet, and
            # in all at most their one CPU's time over the readings, which span the half-second
            # trial and the generator's start and end (a DPDK engine polls the whole time)
            assert r.engine_ns_per_packet > 0 and r.engine_ns_per_packet * r.rx < 1.5e9, r
            assert r.engine_wait_ms is not None and r.engine_wait_ms >= 0, r
            assert 0.98 * r.tx <= r.rx <= r.tx
            assert eng.forwarded(tb) - f0 == r.rx  # Click's own counter matches the sink
            assert kernel.guard_count(tb) == 0  # the kernel forwarded nothing
            eng.stop(tb)


SEND_TTL1 = textwrap.dedent("""
    import socket, struct, sys
    dev, src_mac, dst_mac = sys.argv[1:4]
    mac = lambda m: bytes(int(x, 16) for x in m.split(":"))
    ip = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, 0, 28, 1, 0, 1, 17, 0,
                               bytes([10, 70, 1, 2]), bytes([10, 71, 0, 1])))
    s = sum(struct.unpack("!10H", bytes(ip))); s = (s & 0xFFFF) + (s >> 16)
    ip[10:12] = struct.pack("!H", ~s & 0xFFFF)
    frame = mac(dst_mac) + mac(src_mac) + b"\\x08\\x00" + bytes(ip) + struct.pack("!HHHH", 5000, 5001, 8, 0)
    rx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0800)); rx.bind((dev, 0)); rx.settimeout(5)
    tx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW); tx.bind((dev, 0)); tx.send(frame)
    while True:
        f = rx.recv(2048)
        if f[23] == 1:  # ICMP
            print(f[26:30].hex(), f[34], f[35]); break
""")


@root
def test_ttl_expiry_is_answered_with_icmp_on_the_testbed(engine):
    eng = engine
    with namespaces.NamespaceTestbed() as tb:
        eng.start(tb, scenarios.load("single-flow"))
        p = tb.spawn(tb.ns_tg, sys.executable, "-c", SEND_TTL1, tb.tg_if, namespaces.NamespaceTestbed.mac(tb.ns_tg, tb.tg_if),
                     namespaces.NamespaceTestbed.mac(tb.ns_dut, tb.dut_in), stdout=subprocess.PIPE, text=True)
        src, icmp_type, code = p.communicate(timeout=20)[0].split()
        eng.stop(tb)
    assert src == "0a460101" and (icmp_type, code) == ("11", "0")  # time exceeded from 10.70.1.1


@root
def test_fastclick_dpdk_holds_the_queue_it_declares():
    """While FastClick on DPDK is stopped, its AF_XDP ring fills: a stop that brings 0.8 of
    the declared queue loses nothing, one that brings 1.25 of it loses the excess. With
    rlgen, whose chain runs this engine's receive on the generator's CPU, stopping the
    process stops all of the router that the ring waits for; with the XDP generator a CPU
    stop halts the receive thread too, and the input veth's ring, which no signal can
    hold, is the queue it declares."""
    import signal
    import threading
    import time

    eng = engines.get("fastclick-dpdk")
    try:
        eng.check()
    except EngineNotFound as e:
        engine_absent(str(e))
    sc, load = scenarios.load("single-flow"), 20_000
    with namespaces.NamespaceTestbed(generator="rlgen") as tb:
        queue = eng.bring_up(tb, sc)["router_queue_packets"]
        try:
            pid = int(shell.sh("pgrep", "-f", f"file-prefix {tb.prefix}").split()[0])
            lost = []
            for share in (0.8, 1.25):
                def pause():
                    time.sleep(0.3)
                    os.kill(pid, signal.SIGSTOP)
                    time.sleep(share * queue / load)
                    os.kill(pid, signal.SIGCONT)
                t = threading.Thread(target=pause)
                t.start()
                lost.append(traffic.run_trial(tb, load, 1.0, traffic.TrafficSpec()).lost)
                t.join()
        finally:
            eng.stop(tb)  # its run folder and DPDK's runtime files
    assert lost[0] == 0 and 0.5 * 0.25 * queue < lost[1] < 1.5 * 0.25 * queue, lost
