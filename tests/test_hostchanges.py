"""The journal of a testbed host: what routerlab's commands change on a host's own network
namespace, undone afterwards, and what it cannot undo refused. Run in a scratch network
namespace standing for a host, with a /run of its own."""

import json
import os
import secrets
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root: network namespaces")

SNAPSHOT = textwrap.dedent("""
    import json, os, subprocess
    from pathlib import Path
    from routerlab.errors import HostChangeRefused, TestbedError
    from routerlab.testbed import cleanup, hostchanges
    from routerlab.testbed.shell import nsexec, sh

    def journal(prefix):
        "The host's own namespace named as a run's router (as its agent does), and the run's journal."
        ns = prefix + "-dut"
        sh("ip", "netns", "attach", ns, str(os.getpid()))
        return ns, hostchanges.Journal(Path(f"/run/routerlab/{prefix}-changes.json"), [ns])

    def snapshot():
        run = lambda *a: subprocess.run(a, capture_output=True, text=True).stdout
        return {"addr": run("ip", "-br", "addr"), "route": run("ip", "route"), "neigh": run("ip", "neigh"),
                "nft": run("nft", "list", "ruleset"), "fwd": run("sysctl", "-n", "net.ipv4.ip_forward"),
                "rps": run("cat", "/sys/class/net/eth1/queues/rx-0/rps_cpus"),
                "gro": [l for l in run("ethtool", "-k", "eth1").splitlines() if "generic-receive-offload" in l],
                "link": run("ip", "-br", "link", "show", "eth1")}
""")


def on_a_host(script: str) -> dict:
    """Run ``script`` (Python) as routerlab would on a host: in a network namespace of its
    own with an interface eth1, its own /run; the script prints one JSON line."""
    ns = f"rlhost{secrets.token_hex(3)}-scratch"
    subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        subprocess.run(["ip", "-n", ns, "link", "add", "eth1", "type", "veth", "peer", "name", "eth1p"], check=True)
        p = subprocess.run(["ip", "netns", "exec", ns, "unshare", "--mount", "--propagation", "private", "sh", "-c",
                            f"mount -t tmpfs tmpfs /run && exec {sys.executable} -c \"$0\"", SNAPSHOT + script],
                           capture_output=True, text=True, timeout=60)
        assert p.returncode == 0, p.stderr
        return json.loads(p.stdout.strip().splitlines()[-1])
    finally:
        subprocess.run(["ip", "netns", "del", ns])


def test_what_the_router_set_up_changed_is_undone_newest_first():
    got = on_a_host(textwrap.dedent("""
        ns, j = journal("rl0a0b0c")
        before = snapshot()
        j.__enter__()
        nsexec(ns, "sysctl", "-qw", "net.ipv4.ip_forward=1")
        sh("ip", "-n", ns, "link", "set", "dev", "eth1", "up")
        sh("ip", "-n", ns, "addr", "add", "10.70.1.1/24", "dev", "eth1")
        sh("ip", "-n", ns, "route", "replace", "10.71.0.0/24", "via", "10.70.1.2", "dev", "eth1")
        sh("ip", "-n", ns, "neigh", "replace", "10.70.1.2", "lladdr", "02:00:00:00:00:02", "dev", "eth1", "nud", "permanent")
        nsexec(ns, "nft", "-f", "-", input="table inet rltest {\\n chain c { type filter hook forward priority 0; }\\n}\\n")
        nsexec(ns, "sh", "-c", "echo 1 > /sys/class/net/eth1/queues/rx-0/rps_cpus")
        nsexec(ns, "ethtool", "-K", "eth1", "gro", "on")
        during = snapshot()
        on_disk = json.loads(Path("/run/routerlab/rl0a0b0c-changes.json").read_text())
        j.__exit__(None, None, None)
        failed = j.restore()
        print(json.dumps({"before": before, "during": during, "after": snapshot(), "failed": failed,
                          "listed": on_disk["changes"], "file": Path(j.path).exists()}))
    """))
    assert got["during"] != got["before"]
    assert got["after"] == got["before"] and got["failed"] == []
    assert not got["file"]
    assert any("ip_forward" in c for c in got["listed"]) and "nft tables inet rltest" in got["listed"]


def test_a_killed_runs_journal_is_undone_by_clean():
    got = on_a_host(textwrap.dedent("""
        ns, j = journal("rl0a0b0d")
        before = snapshot()
        j.__enter__()
        sh("ip", "-n", ns, "addr", "add", "10.70.2.1/24", "dev", "eth1")
        nsexec(ns, "nft", "-f", "-", input="table netdev rlsink {\\n counter rx { }\\n}\\n")
        j.__exit__(None, None, None)
        # the run's process is gone: its pid in the journal is one that is not alive
        state = json.loads(j.path.read_text()); state["pid"] = 2 ** 22 + 1; j.path.write_text(json.dumps(state))
        # something else the host runs, in its own namespace
        other = subprocess.Popen(["sleep", "60"])
        removed = cleanup.clean()
        print(json.dumps({"before": before, "after": snapshot(), "removed": removed,
                          "handle": os.path.exists("/run/netns/" + ns), "other": other.poll()}))
        other.kill()
    """))
    assert got["after"] == got["before"]
    assert "set-up of rl0a0b0d: nft tables netdev rlsink" in got["removed"]
    # the handle of the host's own namespace is removed, and what runs there is not killed
    assert not got["handle"] and got["other"] is None


def test_a_change_the_journal_cannot_undo_is_refused_before_it_is_made():
    got = on_a_host(textwrap.dedent("""
        ns, j = journal("rl0a0b0e")
        sh("ip", "link", "set", "dev", "eth1", "up")
        sh("ip", "addr", "add", "10.70.1.1/24", "dev", "eth1")
        sh("ip", "route", "add", "10.71.0.0/24", "via", "10.70.1.2")  # the host's own
        nsexec(ns, "nft", "-f", "-", input="table inet rlguard {\\n}\\n")  # the host's own
        j.__enter__()
        said = []
        for cmd, inp in ((["ip", "-n", ns, "route", "replace", "10.71.0.0/24", "via", "10.70.1.3"], None),
                         (["ip", "netns", "exec", ns, "nft", "-f", "-"], "table inet rlguard {\\n}\\n"),
                         (["ip", "-n", ns, "link", "set", "dev", "eth1", "mtu", "1400"], None)):
            try:
                sh(*cmd, input=inp)
                said.append("ran")
            except HostChangeRefused as e:
                said.append(str(e))
        route = subprocess.run(["ip", "route", "show", "10.71.0.0/24"], capture_output=True, text=True).stdout
        j.__exit__(None, None, None)
        print(json.dumps({"said": said, "route": route, "undo": j.undo}))
    """))
    route, table, mtu = got["said"]
    assert "would replace the host's own route to 10.71.0.0/24" in route and "10.70.1.2" in got["route"]
    assert "nft table inet rlguard exists on this host already" in table
    assert "cannot undo" in mtu
    assert got["undo"] == []


def test_a_failed_command_is_not_undone_and_the_hosts_own_networks_are_refused():
    got = on_a_host(textwrap.dedent("""
        ns, j = journal("rl0a0b0f")
        sh("ip", "link", "add", "eth1.100", "type", "veth", "peer", "name", "p100")
        sh("ip", "link", "set", "dev", "eth1", "up")
        sh("ip", "addr", "add", "10.70.2.7/24", "dev", "eth1")  # the host's own, in the sink's network
        sh("ip", "route", "add", "10.128.0.9/32", "dev", "eth1")  # the host's own, in the fill range
        before = snapshot()
        j.__enter__()
        said = []
        for cmd in (["ip", "-n", ns, "addr", "add", "10.70.1.1/24", "dev", "nosuchdev"],
                    ["ip", "-n", ns, "addr", "add", "10.70.2.1/24", "dev", "eth1"],
                    ["ip", "netns", "exec", ns, "python3", "-m", "routerlab.testbed.netlink_routes", "10.128.0.0", "3",
                     "10.70.2.2", "eth1"]):
            try:
                sh(*cmd)
                said.append("ran")
            except HostChangeRefused as e:
                said.append(str(e))
            except TestbedError as e:
                said.append("failed")
        # a name with a dot, as a VLAN's: its sysctl in the slash form
        nsexec(ns, "sysctl", "-qw", "net/ipv6/conf/eth1.100/disable_ipv6=1")
        listed = list(j.listed)
        j.__exit__(None, None, None)
        failed = j.restore()
        v6 = subprocess.run(["sysctl", "-n", "net/ipv6/conf/eth1.100/disable_ipv6"], capture_output=True, text=True)
        print(json.dumps({"said": said, "listed": listed, "failed": failed, "v6": v6.stdout.strip(),
                          "before": before, "after": snapshot()}))
    """))
    nodev, taken, fill = got["said"]
    assert nodev == "failed" and "nosuchdev" not in " ".join(got["listed"])  # nothing to undo for it
    assert "the host has an address in 10.70.2.0/24 already (eth1)" in taken
    assert "the host has routes in 10.128.0.0/9" in fill
    assert got["listed"] == ["sysctl -qw net/ipv6/conf/eth1.100/disable_ipv6=1"]
    assert got["failed"] == [] and got["v6"] == "0" and got["after"] == got["before"]
