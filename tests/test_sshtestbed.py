"""The testbed beyond one machine: testbed files, SSH, the hosts' set-up undone, the same
measurements as the namespace testbed.

The hosts are network namespaces of this machine, each with its own OpenSSH server, /run,
home folder and engines folder (tests/sshhosts.py)."""

import copy
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

import sshhosts
from conftest import ROOT, engine_marks
from routerlab.measuring import search, sweep
from routerlab.remote import sshtestbed, testbedfile
from routerlab.analysis import stats
from routerlab.errors import DataFormatError, RouterlabError, SshError
from routerlab.analysis.scenarios import Scenario
from routerlab.remote.ssh import Connection

ROUTERLAB = [sys.executable, "-m", "routerlab.cli"]
MACS = ("02:00:00:00:00:01", "02:00:00:00:00:02", "02:00:00:00:00:03", "02:00:00:00:00:04")


def two_hosts() -> dict:
    return {"hosts": {"loadgen": {"ssh": "lab@192.0.2.10"}, "dut": {"ssh": "lab@192.0.2.11:2222"}},
            "roles": {"generator": {"host": "loadgen", "cpu": 0,
                                    "interfaces": {"out": {"name": "ens1f0", "mac": MACS[0]}}},
                      "router": {"host": "dut", "cpu": 1,
                                 "interfaces": {"in": {"name": "ens1f0", "mac": MACS[1]},
                                                "out": {"name": "ens1f1", "mac": MACS[2]}}},
                      "sink": {"host": "loadgen", "cpu": 1, "interfaces": {"in": {"name": "ens1f1", "mac": MACS[3]}}}},
            "links": [["generator.out", "router.in"], ["router.out", "sink.in"]]}


def write(tmp_path, spec, name="hosts.yaml") -> Path:
    p = tmp_path / name
    p.write_text(yaml.safe_dump(spec))
    return p


# -- the testbed file ----------------------------------------------------------------------------

def test_two_and_three_host_files_load(tmp_path):
    tf = testbedfile.load(write(tmp_path, two_hosts()))
    assert tf.layout == 2
    assert tf.host_of("router").destination == "lab@192.0.2.11" and tf.host_of("router").port == 2222
    assert tf.interface("sink", "in").name == "ens1f1" and [h.name for h in tf.used_hosts()] == ["loadgen", "dut"]
    three = two_hosts()
    three["hosts"]["sinkhost"] = {"ssh": "192.0.2.12"}
    three["roles"]["sink"]["host"] = "sinkhost"
    assert testbedfile.load(write(tmp_path, three)).layout == 3


def _set(spec, path, value):
    *head, last = path
    for k in head:
        spec = spec[k]
    if value is KeyError:
        del spec[last]
    else:
        spec[last] = value


@pytest.mark.parametrize("path, value, says", [
    (("hosts", "dut", "sssh"), "x", "host dut: unknown key 'sssh'; allowed: ssh, python, env"),
    (("hosts", "dut", "ssh"), "lab@host:99999", "host dut: key 'ssh': must be user@host[:port]"),
    (("hosts", "dut", "ssh"), "lab@host; rm -rf /", "host dut: key 'ssh'"),
    (("hosts", "dut", "ssh"), KeyError, "host dut: missing key(s) ssh"),
    (("hosts", "dut", "env"), {"A B": "1"}, "host dut: key 'env': 'A B' is not a variable name"),
    (("roles", "firewall"), {"host": "dut"}, "roles: unknown key 'firewall'; allowed: generator, router, sink"),
    (("roles", "sink"), KeyError, "roles: missing key(s) sink"),
    (("roles", "router", "host"), "nowhere", "role router: key 'host': 'nowhere' is not one of the hosts"),
    (("roles", "generator", "host"), "dut", "role generator: key 'host': dut is the router's host"),
    (("roles", "router", "interfaces", "out"), KeyError, "role router: interfaces: missing key(s) out"),
    (("roles", "router", "interfaces", "in", "mac"), "02:00:00:00:00", "role router: interface in: key 'mac'"),
    (("roles", "router", "interfaces", "in", "name"), "eth0; reboot", "role router: interface in: key 'name'"),
    (("roles", "router", "cpu"), -1, "role router: key 'cpu'"),
    (("roles", "sink", "interfaces", "in", "name"), "ens1f0", "host loadgen: interface ens1f0 is the generator's and the sink's"),
    (("links",), [["generator.out", "router.in"], ["router.in", "sink.in"]], "links: link 2: router.in to sink.in: the ends do not match"),
    (("links",), [["generator.out", "router.in"], ["router.out", "sink.out"]], "links: link 2: 'sink.out' is no role's interface"),
    (("links",), [["generator.out", "router.in"], ["router.in", "generator.out"]], "the same link is named twice"),
    (("links",), [["generator.out", "router.in"]], "links: [['generator.out', 'router.in']] is not allowed; allowed: the two links"),
    (("ssh_config",), "no-such-config", "key 'ssh_config'"),
])
def test_a_bad_testbed_file_is_refused_in_one_line_naming_the_file_and_the_key(tmp_path, path, value, says):
    spec = copy.deepcopy(two_hosts())
    _set(spec, path, value)
    f = write(tmp_path, spec)
    with pytest.raises(DataFormatError) as e:
        testbedfile.load(f)
    msg = str(e.value)
    assert isinstance(e.value.line, int) and msg.startswith(f"{f}:{e.value.line}: ") and says in msg and "\n" not in msg


@pytest.mark.parametrize("page, after", [("README.md", "### Beyond one machine"),
                                         ("docs/testbed-ssh.md", "## The testbed file")])
def test_the_documented_testbed_files_are_valid(tmp_path, page, after):
    import re

    text = (ROOT / page).read_text().split(after, 1)[1]
    example = re.search(r"```yaml\n(.*?)```", text, re.S).group(1)
    (tmp_path / "ssh_config").write_text("")
    tf = testbedfile.load(write(tmp_path, yaml.safe_load(example)))
    assert tf.layout == 2 and tf.interface("router", "out").name == "ens1f1"


def test_a_host_no_role_is_on_is_refused(tmp_path):
    spec = two_hosts()
    spec["hosts"]["spare"] = {"ssh": "192.0.2.99"}
    with pytest.raises(DataFormatError, match="host spare: no role is on it"):
        testbedfile.load(write(tmp_path, spec))


def test_a_remote_command_is_quoted_word_by_word():
    conn = Connection(testbedfile.Host("h", "lab@h", env=(("ROUTERLAB_ENGINES_DIR", "/srv/my engines"),)), Path("/x"))
    line = conn.remote(["printf", "%s", "a b", "$(touch /tmp/x)", "; reboot"])
    assert line == "env 'ROUTERLAB_ENGINES_DIR=/srv/my engines' printf %s 'a b' '$(touch /tmp/x)' '; reboot'"
    opts = conn.argv(["true"])
    assert "BatchMode=yes" in opts and "StrictHostKeyChecking=yes" in opts


# -- on hosts over SSH -------------------------------------------------------------------------

def _needs_hosts(test):
    """Root for the hosts' namespaces; OpenSSH and netcat for their servers: missing, the
    test skips naming it (fails under ROUTERLAB_REQUIRE_ENGINES=1, as make test and CI run)."""
    test = pytest.mark.skipif(os.geteuid() != 0, reason="needs root: the hosts are network namespaces")(test)
    if sshhosts.missing():
        test = pytest.mark.engine_absent(f"the SSH testbed's test hosts: {sshhosts.missing()}")(test)
    return test


needs_hosts = _needs_hosts


@pytest.fixture(scope="module")
def hosts(tmp_path_factory):
    with sshhosts.Hosts(tmp_path_factory.mktemp("ssh2"), layout=2) as h:
        h.file = h.write()
        yield h


def states(h):
    return {name: h.state(name) for name in h.names}


def same_as(h, before):
    """Assert every host's state is ``before``'s, naming the host and what differs."""
    now = states(h)
    for host in before:
        for key in before[host]:
            assert now[host][key] == before[host][key], f"host {host}: {key} not as before"


@needs_hosts
def test_every_remote_word_arrives_as_one_word(hosts, tmp_path):
    tf = testbedfile.load(hosts.file)
    conn = Connection(tf.hosts["dut"], tmp_path / "ctl", tf.ssh_config).open()
    try:
        marker = tmp_path / "injected"
        out = conn.run(["printf", "%s|", "a b", f"$(touch {marker})", f"; touch {marker}", "'\"`"])
        assert out == f"a b|$(touch {marker})|; touch {marker}|'\"`|"
        assert not marker.exists()
        # the host's variables reach the command: its own home and engines folder
        assert conn.run(["sh", "-c", 'echo "$HOME $ROUTERLAB_ENGINES_DIR"']).split() == \
            [str(hosts.home("dut")), str(hosts.folder / "dut" / "engines")]
    finally:
        conn.close()


@needs_hosts
def test_a_host_whose_key_is_unknown_is_refused_and_nothing_asks_for_a_password(hosts, tmp_path):
    config = (hosts.folder / "ssh_config").read_text()
    (tmp_path / "known_hosts").write_text("")
    (tmp_path / "unknown_config").write_text(config.replace(str(hosts.folder / "known_hosts"), str(tmp_path / "known_hosts")))
    host = testbedfile.Host("dut", "dut")
    t0 = time.monotonic()
    with pytest.raises(SshError, match="host dut .*Host key verification failed"):
        Connection(host, tmp_path / "ctl", tmp_path / "unknown_config").open()
    # a key the host does not accept: refused at once, no prompt (BatchMode)
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(tmp_path / "other")], check=True)
    (tmp_path / "other_config").write_text(config.replace(str(hosts.folder / "id"), str(tmp_path / "other")))
    with pytest.raises(SshError, match="host dut .*Permission denied"):
        Connection(host, tmp_path / "ctl", tmp_path / "other_config").open()
    assert time.monotonic() - t0 < 20
    assert not (tmp_path / "known_hosts").read_text()  # never added


@needs_hosts
def test_an_interface_not_as_the_file_says_is_refused_naming_host_and_interface(hosts, tmp_path):
    spec = hosts.spec()
    spec["roles"]["router"]["interfaces"]["in"]["mac"] = "02:00:00:00:99:99"
    f = hosts.write(spec, "wrong-mac.yaml")
    r = subprocess.run([*ROUTERLAB, "measure", "--testbed", str(f), "--engine", "linux", "--loads", "10000",
                        "--ceiling", "100000", "--runs", "1", "--duration", "0.2", "--out", str(tmp_path / "o")],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode != 0
    assert "host dut: interface router.in (eth1) has MAC" in r.stderr and "02:00:00:00:99:99" in r.stderr
    spec["roles"]["router"]["interfaces"]["in"].update(name="eth9", mac=hosts.mac("dut", "eth1"))
    f = hosts.write(spec, "no-such-interface.yaml")
    r = subprocess.run([*ROUTERLAB, "measure", "--testbed", str(f), "--engine", "linux", "--loads", "10000",
                        "--ceiling", "100000", "--runs", "1", "--duration", "0.2", "--out", str(tmp_path / "o")],
                       capture_output=True, text=True, cwd=ROOT)
    assert "host dut: interface router.in (eth9) is not on this host" in r.stderr


@needs_hosts
def test_engines_are_the_router_hosts_own(hosts, tmp_path):
    """An engine is looked for on the router's host, in its own engines folder, whatever
    this machine has installed; one that needs more than the router's host is refused
    before anything is measured."""
    def measure(engine):
        return subprocess.run([*ROUTERLAB, "measure", "--testbed", str(hosts.file), "--engine", engine,
                               "--loads", "10000", "--runs", "1", "--duration", "0.2", "--out",
                               str(tmp_path / engine)], capture_output=True, text=True, cwd=ROOT)

    r = subprocess.run([*ROUTERLAB, "doctor", "--testbed", str(hosts.file), "fastclick"], capture_output=True,
                       text=True, cwd=ROOT)
    assert r.returncode == 1 and "== host loadgen (generator, sink)" in r.stdout and "== host dut (router)" in r.stdout
    r2 = subprocess.run([*ROUTERLAB, "doctor", "--testbed", str(hosts.file), "ip"], capture_output=True, text=True,
                        cwd=ROOT)
    assert "== host dut (router)" in r2.stdout
    assert r.stdout.split("== host dut")[1].count("missing") >= 1
    r = measure("fastclick")
    assert r.returncode != 0
    assert "host dut: fastclick: not installed (run: routerlab engines install fastclick)" in r.stderr
    assert f"from here: routerlab engines install --testbed {hosts.file} fastclick" in r.stderr
    r = measure("ebpf")
    assert r.returncode != 0 and "ebpf runs on the namespace testbed only" in r.stderr
    assert "ceiling" not in r.stderr  # refused before anything was measured


@needs_hosts
def test_a_router_routerlab_does_not_build_runs_on_the_router_host(hosts, tmp_path):
    """The exec engine's commands run on the router's host, in its own home; without
    --ready it is refused (its default probe would need the generator's and sink's hosts)."""
    base = [*ROUTERLAB, "measure", "--testbed", str(hosts.file), "--engine", "exec", "--loads", "20000",
            "--ceiling", "100000", "--runs", "2", "--duration", "0.3"]
    r = subprocess.run(base + ["--start", "exec sleep 600", "--out", str(tmp_path / "x")],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode != 0 and "give --ready" in r.stderr
    before = states(hosts)
    r = subprocess.run(base + ["--start", 'echo "$HOME" > "$HOME/started"; exec sleep 600', "--ready", "true",
                               "--kernel-forwarding", "--version-command", "echo my-router 1.0",
                               "--out", str(tmp_path / "exec")], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert (hosts.home("dut") / "started").read_text().strip() == str(hosts.home("dut"))
    import pandas as pd

    trials = pd.read_csv(tmp_path / "exec" / "trials.csv")
    assert (trials["rx"] == trials["tx"]).all() and (trials["tx"] > 0).all()
    assert pd.read_csv(tmp_path / "exec" / "experiments.csv").iloc[0]["engine_version"] == "my-router 1.0"
    same_as(hosts, before)


@needs_hosts
def test_a_sweep_over_ssh_measures_and_leaves_every_host_as_it_was(hosts, tmp_path):
    before = states(hosts)
    out = tmp_path / "linux"
    r = subprocess.run([*ROUTERLAB, "measure", "--testbed", str(hosts.file), "--engine", "linux",
                        "--loads", "20000,40000", "--runs", "2", "--duration", "0.5", "--out", str(out)],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    import pandas as pd

    trials = pd.read_csv(out / "trials.csv")
    assert len(trials) == 4 and (trials["tx"] > 0).all()
    # the trial's counters are the hosts': the generator's link, the sink's count, the router's own
    assert (trials["rx"] <= trials["tx"]).all() and (trials["engine_forwarded"] >= trials["rx"]).all()
    assert trials["cpu_stop_ms"].notna().all()  # the CPU probe ran on the router's host
    # so did the speed probe; the generator's CPU is another host's, whose CPU times are not read
    assert (trials["cpu_speed"] > 0).all() and (trials["memory_ns"] > 0).all() and (trials["router_ns_per_packet"] >= 0).all()
    assert trials["gen_cpu_load"].isna().all() and trials["sink_cpu_load"].isna().all()
    rec = pd.read_csv(out / "experiments.csv").iloc[0]
    assert "SSH testbed hosts.yaml, 2 hosts" in rec["where"] and "router on dut" in rec["where"]
    assert "(veth)" in rec["where"]  # each host's NIC driver
    assert rec["generator_ceiling_pps"] > 40000 and "router host dut CPU 1" in rec["pinning"]
    same_as(hosts, before)


@needs_hosts
def test_ssh_and_namespaces_give_the_calibration_routers_known_answers(hosts, tmp_path):
    """The same sweep and the same search through SSH and through the namespace testbed
    give consistent answers: both measure the loss and find the PDR of a router whose
    loss and PDR are known."""
    import pandas as pd

    from contextlib import nullcontext

    from routerlab.testbed.settings import Settings
    from routerlab.engines.calibration import Calibration

    sc = Scenario(name="single-flow")
    # three trials a load, their median: one trial disturbed by the busy machine (the
    # generator's catch-up burst meets a token bucket the load keeps empty) moves no answer
    capacity, loads, duration, runs = 30000, [15000, 60000], 0.5, 3
    pdr, loss = {}, {}
    for where in ("ssh", "namespaces"):
        block = sshtestbed.using(hosts.file) if where == "ssh" else nullcontext(Settings.asked("rlgen"))
        with block as settings:
            eng = Calibration(capacity_pps=capacity)
            sweep.run(sweep.SweepPlan("calibration", sc, loads, runs=runs, duration=duration), tmp_path / where,
                      engine=eng, ceiling_pps=120000, settings=settings)
            (res,) = search.run_search(Calibration(capacity_pps=capacity), sc, tmp_path / where, kind="pdr",
                                       ceiling_pps=120000, final_duration=1.0, final_trials=2, experiment="pdr",
                                       settings=settings)
        t = pd.read_csv(tmp_path / where / "trials.csv")
        loss[where] = (t["lost"] / t["tx"]).groupby(t["offered_pps"]).median()
        for load, measured in loss[where].items():
            assert abs(measured - eng.expected_loss(load, duration)) < 0.02, (where, load, measured)
        pdr[where] = res.lower
        truth = eng.true_pdr(1.0, stats.PDR_FRACTION)
        assert abs(res.lower - truth) / truth < 0.05, (where, res.lower, truth)
    assert abs(pdr["ssh"] - pdr["namespaces"]) / pdr["namespaces"] < 0.05
    assert (abs(loss["ssh"] - loss["namespaces"]) < 0.02).all()


@needs_hosts
def test_compare_fills_its_cells_on_the_hosts_and_greys_what_cannot_run_there(hosts, tmp_path):
    r = subprocess.run([*ROUTERLAB, "compare", "--testbed", str(hosts.file), "--engine", "nft", "--engine", "ebpf",
                        "--engine", "fastclick", "--scenario", "single-flow-fw50", "--loads-frac", "0.05",
                        "--runs", "1", "--duration", "0.3", "--ceiling", "100000", "--out", str(tmp_path / "cmp")],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
    import pandas as pd

    cells = pd.read_csv(tmp_path / "cmp" / "cells.csv").set_index("engine")
    assert bool(cells.loc["nft", "runnable"]) and not bool(cells.loc["ebpf", "runnable"])
    assert "namespace testbed only" in cells.loc["ebpf", "reason"]
    assert "host dut: fastclick: not installed" in cells.loc["fastclick", "reason"]
    assert "SSH testbed" in pd.read_csv(tmp_path / "cmp" / "experiments.csv").iloc[0]["where"]


@needs_hosts
def test_a_campaign_runs_on_the_hosts(hosts, tmp_path):
    (tmp_path / "campaign.yaml").write_text(
        "description: a sweep of the kernel at a fraction of the ceiling, on the SSH testbed\n"
        "ceiling: measure\n"
        "steps:\n"
        "  - measure: {engine: linux, scenario: single-flow, loads_frac: [0.05], runs: 2, duration: 0.3}\n")
    r = subprocess.run([*ROUTERLAB, "campaign", "run", str(tmp_path / "campaign.yaml"), "--testbed", str(hosts.file),
                        "--out", str(tmp_path / "out")], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
    import pandas as pd

    rec = pd.read_csv(tmp_path / "out" / "experiments.csv").iloc[0]
    assert "SSH testbed" in rec["where"] and rec["generator"].startswith("rlgen")
    assert len(pd.read_csv(tmp_path / "out" / "trials.csv")) == 2


@needs_hosts
def test_loss_over_ssh_is_attributed_where_the_router_dropped_it(hosts, tmp_path):
    """The calibration router offered twice its capacity drops half in its nftables limit:
    the router host's drop tracepoint sees it there, and the sink's counting drop is design."""
    import pandas as pd

    from routerlab.engines.calibration import Calibration

    with sshtestbed.using(hosts.file) as settings:
        plan = sweep.SweepPlan("calibration", Scenario(name="single-flow"), [40000], runs=2, duration=0.5)
        sweep.run(plan, tmp_path / "cal", engine=Calibration(capacity_pps=20000), ceiling_pps=100000,
                  settings=settings)
    assert "SSH testbed" in pd.read_csv(tmp_path / "cal" / "experiments.csv")["where"].iloc[0]  # measured over SSH

    trials = pd.read_csv(tmp_path / "cal" / "trials.csv")
    assert (trials["lost"] > 0.4 * trials["tx"]).all()
    assert (abs(trials["lost_unexplained"]) < 0.02 * trials["lost"]).all(), trials[["lost", "lost_attributed"]]
    assert trials["drops"].str.startswith("dut:NETFILTER_DROP=").all()
    rows = pd.read_csv(tmp_path / "cal" / "drops.csv")
    design = rows[rows["counted_as"] == "design"]
    assert set(zip(design["place"], design["reason"])) == {("sink", "NETFILTER_DROP")}
    # nodev: a packet freed without a device, anywhere on that host (its sshd, another run)
    assert rows["place"].str.match(r"^(dut|sink|tg|(loadgen|dut):(cpu\d+|nodev))$").all(), rows


def wait_for_trials(p, out, n=2):
    """Wait (up to 60 s) until the measurement ``p`` has written ``n`` trials into ``out``."""
    deadline = time.monotonic() + 60
    while not ((out / "trials.csv").is_file() and len((out / "trials.csv").read_text().splitlines()) > n):
        assert p.poll() is None and time.monotonic() < deadline
        time.sleep(0.1)


def mid_sweep(hosts, out):
    """A long nft sweep over SSH, once it has written its first trials."""
    p = subprocess.Popen([*ROUTERLAB, "measure", "--testbed", str(hosts.file), "--engine", "nft",
                          "--loads", "20000", "--ceiling", "100000", "--runs", "100", "--duration", "0.5",
                          "--out", str(out)], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for_trials(p, out)
    return p


@needs_hosts
def test_kill_9_in_the_middle_of_a_sweep_then_clean_leaves_every_host_as_before(hosts, tmp_path):
    before = states(hosts)
    out = tmp_path / "killed"
    p = mid_sweep(hosts, out)
    during = states(hosts)
    assert during["dut"] != before["dut"]  # the router's set-up is there
    # the measuring process and every host's agent die at once: only clean can undo it
    agents = subprocess.run(["pgrep", "-f", f"{sys.executable} -m routerlab.remote.hostagent"], capture_output=True,
                            text=True).stdout.split()
    assert agents
    for pid in agents:
        os.kill(int(pid), signal.SIGKILL)
    p.kill()
    p.wait()
    time.sleep(1)
    r = subprocess.run([*ROUTERLAB, "clean", "--testbed", str(hosts.file)], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    # each undone change named, by host and run
    assert "removed host dut: set-up of rl" in r.stdout and ": nft tables inet rlfw" in r.stdout
    same_as(hosts, before)


@needs_hosts
def test_a_killed_measurement_leaves_every_host_as_before_without_clean(hosts, tmp_path):
    """Only the measuring process dies: its SSH sessions end with it, and each agent undoes
    its host's set-up by itself."""
    before = states(hosts)
    out = tmp_path / "killed"
    p = mid_sweep(hosts, out)
    assert states(hosts)["dut"] != before["dut"]
    p.kill()
    p.wait()
    deadline = time.monotonic() + 30
    while states(hosts) != before and time.monotonic() < deadline:
        time.sleep(0.5)
    same_as(hosts, before)
    # here, the killed process's state file is what is left: clean removes it
    def left():
        return [f for f in Path("/run/routerlab").glob("rl*-driver.json") if str(hosts.file) in f.read_text()]

    assert left()
    subprocess.run([*ROUTERLAB, "clean", "--testbed", str(hosts.file)], check=True, capture_output=True, cwd=ROOT)
    assert not left()
    assert not subprocess.run(["pgrep", "-f", str(hosts.folder / "ssh_config")], capture_output=True).stdout
    # nor the control sockets' folders of the killed process
    assert not list(Path("/run/routerlab").glob(f"ssh-{p.pid}-*"))


@needs_hosts
def test_ctrl_c_leaves_every_host_as_before_and_the_sweep_resumes(hosts, tmp_path):
    before = states(hosts)
    out = tmp_path / "interrupted"
    argv = [*ROUTERLAB, "measure", "--testbed", str(hosts.file), "--engine", "linux", "--loads", "20000",
            "--ceiling", "100000", "--runs", "6", "--duration", "0.3", "--out", str(out)]
    # Ctrl-C at its default, as at a terminal (a caller under nohup would ignore it)
    p = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    wait_for_trials(p, out)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=60)
    assert p.returncode != 0 and "Traceback" not in err
    kept = len((out / "trials.csv").read_text().splitlines()) - 1
    assert 0 < kept < 6
    same_as(hosts, before)  # without clean
    r = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    import pandas as pd

    trials = pd.read_csv(out / "trials.csv")
    assert sorted(trials["trial"]) == list(range(6))  # the kept trials, and only the others measured


@needs_hosts
def test_three_hosts(tmp_path):
    with sshhosts.Hosts(tmp_path / "hosts", layout=3) as h:
        f = h.write()
        before = states(h)
        with sshtestbed.using(f) as settings:
            from routerlab.measuring import measurement

            measurement.measure(measurement.Request("linux", "single-flow", tmp_path / "out", loads="20000", runs=2,
                                                    duration=0.5, ceiling_pps=100000, settings=settings))
        import pandas as pd

        trials = pd.read_csv(tmp_path / "out" / "trials.csv")
        assert len(trials) == 2 and (trials["rx"] > 0).all()
        rec = pd.read_csv(tmp_path / "out" / "experiments.csv").iloc[0]
        assert "3 hosts" in rec["where"] and "sink on sink" in rec["where"]
        same_as(h, before)


def _built(name):
    return engine_marks(name, lambda: __import__("routerlab.engines", fromlist=["get"]).get(name).check())[1]


@needs_hosts
@pytest.mark.parametrize("packed, engine", [
    pytest.param(("click",), "click", marks=_built("click")),
    pytest.param(("bmv2", "p4c"), "bmv2", marks=_built("bmv2")),
    pytest.param(("vpp",), "vpp", marks=_built("vpp")),
])
def test_an_engine_installed_on_the_router_host_from_a_bundle_forwards_over_ssh(hosts, tmp_path, packed, engine):
    bundle = tmp_path / "engines.tar.gz"
    r = subprocess.run([*ROUTERLAB, "engines", "pack", *packed, "--out", str(bundle)], capture_output=True,
                       text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([*ROUTERLAB, "engines", "install", "--testbed", str(hosts.file), "--from", str(bundle)],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
    assert any((hosts.folder / "dut" / "engines").glob(f"{engine}-*"))  # on the router's host, in its own folder
    before = states(hosts)
    with sshtestbed.using(hosts.file) as settings:
        from routerlab.measuring import measurement

        measurement.measure(measurement.Request(engine, "single-flow", tmp_path / "out", loads="5000", runs=2,
                                                duration=0.5, ceiling_pps=100000, settings=settings))
    import pandas as pd

    trials = pd.read_csv(tmp_path / "out" / "trials.csv")
    assert (trials["rx"] > 0.9 * trials["tx"]).all() and (trials["engine_forwarded"] > 0).all()
    rec = pd.read_csv(tmp_path / "out" / "experiments.csv").iloc[0]
    assert rec["engine_version"]
    if engine == "vpp":  # its own time per packet, read on the router's host
        costs = pd.read_csv(tmp_path / "out" / "engine_costs.csv")
        graph = costs.loc[costs["stage"] == "graph", "ns_per_packet"]
        assert set(costs["trial"]) == {0, 1} and len(graph) == 2 and (graph > 0).all()
    same_as(hosts, before)


def test_the_ssh_testbed_refuses_the_xdp_generator_and_a_testbed_without_its_file(tmp_path):
    from routerlab.testbed.settings import Settings

    with pytest.raises(RouterlabError, match="needs its testbed file"):
        sshtestbed.SshTestbed()
    with pytest.raises(RouterlabError, match="generator: the SSH testbed sends with rlgen"):
        with sshtestbed.using(write(tmp_path, two_hosts()), Settings.asked("xdp")):
            pass
    asked = Settings.asked("rlgen")
    with sshtestbed.using(write(tmp_path, two_hosts()), asked) as settings:
        assert settings.factory.tf.layout == 2 and settings.beyond_one_machine and settings.generator == "rlgen"
    assert not asked.beyond_one_machine


@needs_hosts
def test_bench_ssh_prints_both_testbeds_next_to_the_floor(hosts, tmp_path):
    r = subprocess.run([*ROUTERLAB, "bench", "ssh", "--testbed", str(hosts.file), "--out", str(tmp_path / "b"),
                        "--trials", "2", "--duration", "0.3"], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    rows = {line.split()[0]: line.split() for line in lines if line.split()[:1] in (["namespaces"], ["ssh"])}
    assert set(rows) == {"namespaces", "ssh"}
    for row in rows.values():
        attempts, per_trial, floor, ratio = int(row[2]), *map(float, row[3:6])
        assert attempts >= 2
        assert floor == 0.3 and per_trial > floor and abs(ratio - per_trial / floor) < 0.01
    assert "SSH's overhead per attempt" in lines[-1]


@needs_hosts
def test_a_host_whose_routerlab_has_the_old_layout_is_refused_in_one_line(hosts, tmp_path):
    """A router host whose python finds a routerlab of the layout before the layers were
    folders (no routerlab.remote) is named, with that routerlab's version, in one line, and
    nothing is measured or left on the hosts."""
    old = tmp_path / "old-layout" / "routerlab"
    old.mkdir(parents=True)
    (old / "__init__.py").write_text('__version__ = "0.0.9"\n')
    (old / "hostagent.py").write_text("raise SystemExit('the old agent must not run')\n")
    spec = hosts.spec()
    spec["hosts"]["dut"]["env"]["PYTHONPATH"] = str(old.parent)
    f = hosts.write(spec, "old-layout.yaml")
    before = {h: hosts.state(h) for h in hosts.names}
    r = subprocess.run([*ROUTERLAB, "measure", "--testbed", str(f), "--engine", "linux", "--loads", "10000",
                        "--ceiling", "100000", "--runs", "1", "--duration", "0.2", "--out", str(tmp_path / "o")],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode != 0
    said = [line for line in r.stderr.splitlines() if "older layout" in line]
    assert len(said) == 1 and "host dut" in said[0] and "0.0.9" in said[0], r.stderr
    assert "Traceback" not in r.stderr
    assert not (tmp_path / "o" / "trials.csv").exists()
    assert {h: hosts.state(h) for h in hosts.names} == before
